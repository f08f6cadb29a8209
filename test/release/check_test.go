package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReleaseChecks: install/release/check.sh, what `make release` runs before and after it
// builds. A final version is built once, from one commit, with its CHANGELOG section and
// nothing left under [Unreleased], from a tree without uncommitted changes; the commit is
// then tagged, and a later commit cannot be released under the same version. A pre-release
// is neither checked nor tagged. Each case in a git repository of its own.
func TestReleaseChecks(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	script := filepath.Join(repoRoot(t), "install", "release", "check.sh")
	const released = "# Changelog\n\n## [Unreleased]\n\n## [1.2.0]\n\n### Added\n\n- A thing.\n"
	repo := func(t *testing.T, changelog string) string {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "CHANGELOG.md"), []byte(changelog), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"init", "-q"}, {"add", "CHANGELOG.md"}, {"commit", "-qm", "one"}} {
			git(t, dir, args...)
		}
		return dir
	}
	check := func(t *testing.T, mode, version, dir, want string) {
		t.Helper()
		out, err := exec.Command("bash", script, mode, version, dir).CombinedOutput()
		switch {
		case want == "" && err != nil:
			t.Errorf("check.sh %s %s: %v\n%s", mode, version, err, out)
		case want != "" && (err == nil || !strings.Contains(string(out), want)):
			t.Errorf("check.sh %s %s: %v, want a refusal saying %q:\n%s", mode, version, err, want, out)
		}
	}

	t.Run("no section", func(t *testing.T) {
		t.Parallel()
		check(t, "check", "1.3.0", repo(t, released), "no section '## [1.3.0]'")
	})
	t.Run("unreleased entries", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, strings.Replace(released, "## [Unreleased]\n", "## [Unreleased]\n\n- Not yet released.\n", 1))
		check(t, "check", "1.2.0", dir, "1 entries under [Unreleased]")
	})
	t.Run("uncommitted change", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, released)
		if err := os.WriteFile(filepath.Join(dir, "CHANGELOG.md"), []byte(released+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		check(t, "check", "1.2.0", dir, "uncommitted changes")
	})
	t.Run("pre-release", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, "# Changelog\n\n## [Unreleased]\n\n- Anything.\n")
		check(t, "check", "1.3.0-rc.1", dir, "")
		check(t, "tag", "1.3.0-rc.1", dir, "")
		if tags := git(t, dir, "tag"); tags != "" {
			t.Errorf("a pre-release was tagged: %q", tags)
		}
	})
	t.Run("tagged once", func(t *testing.T) {
		t.Parallel()
		dir := repo(t, released)
		check(t, "check", "1.2.0", dir, "")
		check(t, "tag", "1.2.0", dir, "")
		first := git(t, dir, "rev-parse", "HEAD")
		if tagged := git(t, dir, "rev-parse", "v1.2.0^{commit}"); tagged != first {
			t.Fatalf("v1.2.0 names %s, want the built commit %s", tagged, first)
		}
		check(t, "check", "1.2.0", dir, "") // built again from the same commit: the same release
		check(t, "tag", "1.2.0", dir, "")
		git(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
		check(t, "check", "1.2.0", dir, "tag v1.2.0 names commit "+first)
	})
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
