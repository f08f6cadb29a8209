package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// busyboxPath is where Debian's busybox-static installs its binary. The dynamically linked
// busybox package installs the same path, so Rootfs checks that it really is static.
const busyboxPath = "/bin/busybox"

// rootfsLayout versions the layout built by buildRootfs: bump it when that changes, so that
// rootfs directories cached by an older harness are not reused.
const rootfsLayout = "e2e-rootfs-v1"

// rootfsCache maps a Rootfs request (its extra binaries) to a once-built result, so parallel
// tests in one test binary build each rootfs once.
var rootfsCache sync.Map // string → func() (string, error)

// Rootfs returns a minimal root filesystem for containers: busybox-static as /bin/busybox
// with a symlink in /bin for each of its applets (sh, sleep, cat, …), the directories and
// files that runtimes mount over, and each extra binary (name → host path) copied to
// /bin/<name>. Extra binaries must be statically linked (for Go: CGO_ENABLED=0), since the
// rootfs has no libc.
//
// The rootfs is shared: every container of every test uses the same directory, mounted
// read-only (bundles say so, and the podman runner passes --read-only). It is built once per
// test binary and cached under os.TempDir in a directory named by a hash of its content, so
// later test binaries reuse it and a changed helper binary gets a new one. (Build helpers
// reproducibly, with go build -trimpath, or each run leaves a new rootfs behind.)
func Rootfs(t testing.TB, extra map[string]string) string {
	t.Helper()
	requireRoot(t)
	names := slices.Sorted(maps.Keys(extra))
	var req strings.Builder
	for _, n := range names {
		fmt.Fprintf(&req, "%s=%s\x00", n, extra[n])
	}
	build, _ := rootfsCache.LoadOrStore(req.String(), sync.OnceValues(func() (string, error) {
		return ensureRootfs(extra, names)
	}))
	dir, err := build.(func() (string, error))()
	if errors.Is(err, errNoStaticBusybox) {
		unavailable(t, "e2e: %v", err)
	}
	if err != nil {
		t.Fatalf("e2e: rootfs: %v", err)
	}
	return dir
}

var errNoStaticBusybox = errors.New(busyboxPath + " is missing or not statically linked: install busybox-static")

// ensureRootfs returns the cached rootfs for this content, building it if no test binary has.
func ensureRootfs(extra map[string]string, names []string) (string, error) {
	if static, err := isStatic(busyboxPath); err != nil || !static {
		return "", errNoStaticBusybox
	}
	for _, n := range names {
		if n == "" || strings.ContainsRune(n, '/') || n == "." || n == ".." {
			return "", fmt.Errorf("extra binary name %q: must be a plain file name", n)
		}
		static, err := isStatic(extra[n])
		if err != nil {
			return "", fmt.Errorf("extra binary %s: %w", n, err)
		}
		if !static {
			return "", fmt.Errorf("extra binary %s (%s) is dynamically linked; the rootfs has no libc (build Go helpers with CGO_ENABLED=0)", n, extra[n])
		}
	}

	h := sha256.New()
	h.Write([]byte(rootfsLayout + "\x00"))
	if err := hashFile(h, busyboxPath); err != nil {
		return "", err
	}
	for _, n := range names {
		h.Write([]byte("\x00" + n + "\x00"))
		if err := hashFile(h, extra[n]); err != nil {
			return "", err
		}
	}
	final := filepath.Join(os.TempDir(), "resctrl-e2e-rootfs-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(final); err == nil {
		return final, nil // built by an earlier test binary: the rename below makes it whole
	}

	// Build beside the final path and rename into place, so a concurrent test binary never
	// sees a half-built rootfs; the loser of a race drops its copy.
	tmp, err := os.MkdirTemp(os.TempDir(), filepath.Base(final)+".tmp-")
	if err != nil {
		return "", fmt.Errorf("make rootfs build dir: %w", err)
	}
	if err := buildRootfs(tmp, extra, names); err != nil {
		_ = os.RemoveAll(tmp)
		return "", fmt.Errorf("build rootfs in %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		_ = os.RemoveAll(tmp)
		if _, statErr := os.Stat(final); statErr == nil {
			return final, nil
		}
		return "", fmt.Errorf("move rootfs into place: %w", err)
	}
	return final, nil
}

// buildRootfs lays out the rootfs in dir.
func buildRootfs(dir string, extra map[string]string, names []string) error {
	// MkdirTemp makes 0700; containers whose user is not root must still traverse the rootfs.
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	// The mount points that runc, crun and podman mount over. They must exist beforehand:
	// the shared rootfs must not be written by a runtime while another container uses it,
	// and podman creates missing ones in the rootfs itself (etc/hosts, run/.containerenv, …).
	for _, d := range []string{"bin", "dev", "etc", "proc", "root", "run", "sys", "tmp", "var/tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	for _, d := range []string{"tmp", "var/tmp"} {
		if err := os.Chmod(filepath.Join(dir, d), 0o1777); err != nil {
			return err
		}
	}
	files := map[string]string{
		"etc/passwd":        "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n",
		"etc/group":         "root:x:0:\nnogroup:x:65534:\n",
		"etc/hosts":         "127.0.0.1\tlocalhost\n",
		"etc/hostname":      "e2e\n",
		"etc/resolv.conf":   "",
		"run/.containerenv": "",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	if err := os.Symlink("/proc/mounts", filepath.Join(dir, "etc/mtab")); err != nil {
		return err
	}

	if err := copyFile(busyboxPath, filepath.Join(dir, "bin/busybox")); err != nil {
		return err
	}
	out, err := exec.Command(busyboxPath, "--list").Output()
	if err != nil {
		return fmt.Errorf("list busybox applets: %w", err)
	}
	for _, applet := range strings.Fields(string(out)) {
		if applet == "busybox" || strings.ContainsRune(applet, '/') {
			continue
		}
		if err := os.Symlink("busybox", filepath.Join(dir, "bin", applet)); err != nil {
			return fmt.Errorf("link applet %s: %w", applet, err)
		}
	}
	for _, n := range names {
		dst := filepath.Join(dir, "bin", n)
		if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err // an extra binary may replace an applet of the same name
		}
		if err := copyFile(extra[n], dst); err != nil {
			return err
		}
	}
	return nil
}

// isStatic reports whether the ELF file at path needs no dynamic loader (see CheckStatic).
func isStatic(path string) (bool, error) {
	err := CheckStatic(path)
	if errors.Is(err, ErrDynamic) {
		return false, nil
	}
	return err == nil, err
}

func hashFile(h io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("hash %s: %w", path, err)
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("hash %s: %w", path, err)
	}
	return nil
}

// copyFile copies an executable to dst with mode 0755.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}
