package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// semver is what a release's version must be (release.sh refuses anything else): helm
// requires SemVer 2 of a chart, and an image tag has no "+" for build metadata.
var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// TestChartVersionIsVERSION: the in-tree chart (what `helm install ./install/helm/resctrl-mon`
// installs, and whose appVersion is the default image tag) carries the VERSION file's
// version as both version and appVersion. `make release` packages it with those anyway; this
// keeps the tree from disagreeing with its own releases.
func TestChartVersionIsVERSION(t *testing.T) {
	t.Parallel()
	version := readVersion(t)
	if !semver.MatchString(version) {
		t.Errorf("VERSION %q: want a semantic version without build metadata", version)
	}
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "install", "helm", "resctrl-mon", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		Version    string `yaml:"version"`
		AppVersion string `yaml:"appVersion"`
	}
	if err := yaml.Unmarshal(b, &chart); err != nil {
		t.Fatalf("Chart.yaml: %v", err)
	}
	if chart.Version != version || chart.AppVersion != version {
		t.Errorf("Chart.yaml: version %q, appVersion %q; want both %q, the VERSION file's", chart.Version, chart.AppVersion, version)
	}
}

// TestMakeVersion: make takes its version from the VERSION file unless told another.
func TestMakeVersion(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	root := repoRoot(t)
	// VERSION in the environment would win over the file, as it does for an operator.
	cmd := exec.Command("make", "-s", "--no-print-directory", "version")
	cmd.Dir = root
	cmd.Env = withoutVersion(os.Environ())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make version: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), readVersion(t); got != want {
		t.Errorf("make version: %q, want the VERSION file's %q", got, want)
	}
	out = runIn(t, root, nil, "make", "-s", "--no-print-directory", "version", "VERSION=9.9.9-x")
	if got := strings.TrimSpace(string(out)); got != "9.9.9-x" {
		t.Errorf("make version VERSION=9.9.9-x: %q", got)
	}
}

// withoutVersion is env without VERSION.
func withoutVersion(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "VERSION=") {
			out = append(out, e)
		}
	}
	return out
}

// TestChangelogHasVersion: CHANGELOG.md has a section for the version about to be released.
func TestChangelogHasVersion(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	if v := readVersion(t); !strings.Contains(string(b), "\n## ["+v+"]") {
		t.Errorf("CHANGELOG.md has no section \"## [%s]\"", v)
	}
}

// TestLicenseIsApache: LICENSE is the Apache License 2.0, verbatim (Debian's copy).
func TestLicenseIsApache(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile("/usr/share/common-licenses/Apache-2.0")
	if err != nil {
		t.Skipf("no reference copy: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(repoRoot(t), "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Error("LICENSE is not the Apache License 2.0 text of /usr/share/common-licenses/Apache-2.0")
	}
}
