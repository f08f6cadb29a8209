package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// requireEnv is the variable that turns a missing precondition from a skip into a failure.
const requireEnv = "RESCTRLSIM_REQUIRE"

// unavailable skips the test for a missing precondition, or fails it when RESCTRLSIM_REQUIRE=1.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("%s (%s=1 forbids skipping)", msg, requireEnv)
	}
	t.Skip(msg)
}

// requireRoot stops a test that is not root: creating containers, cgroups and mounts needs it.
func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		unavailable(t, "e2e: containers need root")
	}
}

// RequireRoot stops a test that is not root (see unavailable): for tests outside this
// package that need root without going through NewRuntime, Podman or Rootfs.
func RequireRoot(t testing.TB) {
	t.Helper()
	requireRoot(t)
}

// Unavailable is unavailable for tests outside this package: a skip, or a failure under
// RESCTRLSIM_REQUIRE=1 (make test's default).
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	unavailable(t, format, args...)
}

// lookBin finds a program on PATH, or in the sbin directories that a non-login root shell may
// lack on PATH (Debian installs runc as /usr/sbin/runc).
func lookBin(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	unavailable(t, "e2e: %s is not installed", name)
	return ""
}

// shortTempDir makes a directory with a short path, removed when the test ends. Not
// t.TempDir: that path embeds the test's name, and runtimes put unix sockets under their
// state and bundle directories, whose paths are limited to 108 bytes.
func shortTempDir(t testing.TB, pattern string) string {
	t.Helper()
	return shortTempDirIn(t, "", pattern)
}

// shortTempDirIn is shortTempDir in parent ("": the system's temporary directory).
func shortTempDirIn(t testing.TB, parent, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		t.Fatalf("e2e: make temp dir: %v", err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("e2e: remove %s: %v", dir, err)
		}
	})
	return dir
}

// WriteScript writes an executable shell script with the given body (after a #!/bin/sh line)
// to a fresh temporary directory and returns its path. Hooks run on the host, so the script
// runs with the host's /bin/sh.
func WriteScript(t testing.TB, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatalf("e2e: write script %s: %v", path, err)
	}
	return path
}

// Tmpfs mounts a fresh tmpfs on a temporary directory, unmounted at cleanup: the hook's state
// directory lives on tmpfs in production (/run/resctrl-mon), and a benchmark that kept it on
// a journaling disk would time the disk's renames instead of the hook.
func Tmpfs(t testing.TB) string {
	t.Helper()
	requireRoot(t)
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=64m"); err != nil {
		unavailable(t, "e2e: mount tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount tmpfs %s: %v", dir, err)
		}
	})
	return dir
}
