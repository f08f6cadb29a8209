package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestImage is the name under which the test rootfs is an image in a CRI runtime's store: the
// app containers' image and the pause image both. No registry is reachable from these
// machines, so the image is made from Rootfs with podman, never pulled. Its command (what a
// pause container runs) is `sleep infinity`.
const TestImage = "localhost/resctrl-e2e:test"

// imageChanges are the image config podman import sets: a PATH (the rootfs has none of its
// own) and the pause container's command.
var imageChanges = []string{
	"ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	`CMD ["/bin/sleep", "infinity"]`,
}

// imageCache maps a rootfs directory to its OCI archive, built once per test binary.
var imageCache sync.Map // string → func() (string, error)

// ImageArchive returns an OCI archive (podman save --format oci-archive) of the rootfs as
// TestImage, for `ctr images import`. It is built once per test binary and kept under
// os.TempDir beside the rootfs it was made from (whose directory name is a hash of its
// content), so later test binaries reuse it.
func ImageArchive(t testing.TB, rootfs string) string {
	t.Helper()
	build, _ := imageCache.LoadOrStore(rootfs, sync.OnceValues(func() (string, error) {
		return ensureImageArchive(rootfs)
	}))
	path, err := build.(func() (string, error))()
	if err != nil {
		t.Fatalf("e2e: image archive of %s: %v", rootfs, err)
	}
	return path
}

func ensureImageArchive(rootfs string) (string, error) {
	final := rootfs + ".oci.tar"
	if _, err := os.Stat(final); err == nil {
		return final, nil
	}
	store, err := os.MkdirTemp("", "e2e-img-")
	if err != nil {
		return "", err
	}
	defer func() {
		_ = unmountUnder(store)
		_ = os.RemoveAll(store)
	}()
	tmp := filepath.Join(filepath.Dir(final), fmt.Sprintf(".%s.%d", filepath.Base(final), os.Getpid()))
	err = withPodmanStore(filepath.Join(store, "root"), filepath.Join(store, "run"), func(ps podmanStore) error {
		if err := ps.importRootfs(rootfs); err != nil {
			return err
		}
		_, err := ps.command("save", "--format", "oci-archive", "--output", tmp, TestImage)
		return err
	})
	if err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	// Renamed into place whole: a concurrent test binary sees no archive or all of it.
	if err := os.Rename(tmp, final); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("move image archive into place: %w", err)
	}
	return final, nil
}

// importImage imports the rootfs as TestImage into a containers/storage store that is not
// podman's own (CRI-O's).
func importImage(root, runRoot, rootfs string) error {
	return withPodmanStore(root, runRoot, func(ps podmanStore) error { return ps.importRootfs(rootfs) })
}

// podmanStore runs podman on a containers/storage store that is not podman's own (CRI-O's,
// or a scratch one), with vfs (no kernel mounts of its own) and the rest of podman's state
// (locks, temporary files, config) in a scratch directory: nothing of the host's podman is
// read or written.
type podmanStore struct {
	root, runRoot, scratch string
}

// withPodmanStore calls f with a podmanStore whose scratch directory lasts until f returns.
// One scratch for all of f's podman calls: podman keeps the first call's --tmpdir in its
// database under root and uses that one afterwards, whatever later calls say.
func withPodmanStore(root, runRoot string, f func(podmanStore) error) error {
	scratch, err := os.MkdirTemp("", "e2e-pst-")
	if err != nil {
		return err
	}
	defer func() {
		_ = unmountUnder(scratch)
		_ = os.RemoveAll(scratch)
	}()
	conf := filepath.Join(scratch, "containers.conf")
	if err := os.WriteFile(conf, []byte("[engine]\nlock_type = \"file\"\nevents_logger = \"none\"\n"), 0o644); err != nil {
		return err
	}
	return f(podmanStore{root: root, runRoot: runRoot, scratch: scratch})
}

// importRootfs imports a root filesystem directory as TestImage.
func (ps podmanStore) importRootfs(rootfs string) error {
	tarball := filepath.Join(ps.scratch, "rootfs.tar")
	defer func() { _ = os.Remove(tarball) }()
	if out, err := exec.Command("tar", "-C", rootfs, "-cf", tarball, ".").CombinedOutput(); err != nil {
		return fmt.Errorf("tar %s: %w: %s", rootfs, err, out)
	}
	args := []string{"import"}
	for _, c := range imageChanges {
		args = append(args, "--change", c)
	}
	_, err := ps.command(append(args, tarball, TestImage)...)
	return err
}

// command runs podman on the store and returns its stdout; an error carries its stderr.
func (ps podmanStore) command(args ...string) ([]byte, error) {
	global := []string{"--root", ps.root, "--runroot", ps.runRoot, "--tmpdir", filepath.Join(ps.scratch, "tmp"),
		"--storage-driver", "vfs", "--cgroup-manager", "cgroupfs"}
	ctx, cancel := context.WithTimeout(context.Background(), podmanTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "podman", append(global, args...)...)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+filepath.Join(ps.scratch, "containers.conf"))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("podman %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}
