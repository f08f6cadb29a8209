package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// hybridUnified is where a hybrid cgroup machine (systemd's layout, as on these machines)
// mounts its cgroup v2 hierarchy beside the v1 ones.
const hybridUnified = "/sys/fs/cgroup/unified"

// prepareCrunOnce runs the host change once per test binary; later calls get its result.
var prepareCrunOnce = sync.OnceValue(moveControllersToV1)

// PrepareCrun makes this machine one that crun runs on, once per test binary.
//
// Why: crun 1.8 refuses a hybrid cgroup machine whose cgroup v2 hierarchy holds any
// controller ("cgroups in hybrid mode not supported, drop all controllers from cgroupv2"),
// and on these machines it holds hugetlb. PrepareCrun mounts a v1 hierarchy for each such
// controller at /sys/fs/cgroup/NAME, which moves the controller from v2 to v1 (a controller
// lives in one hierarchy at a time). runc and podman keep working afterwards: they use
// whatever v1 hierarchies are mounted. The change lasts until the machine reboots.
//
// It is idempotent: with no controller left in /sys/fs/cgroup/unified/cgroup.controllers (or
// no such file: a pure v1 or pure v2 machine, where crun works as it is) it changes nothing.
func PrepareCrun(t testing.TB) {
	t.Helper()
	requireRoot(t)
	if err := prepareCrunOnce(); err != nil {
		t.Fatalf("e2e: PrepareCrun: %v", err)
	}
}

func moveControllersToV1() error {
	controllersFile := filepath.Join(hybridUnified, "cgroup.controllers")
	data, err := os.ReadFile(controllersFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read cgroup v2 controllers: %w", err)
	}
	for _, c := range strings.Fields(string(data)) {
		dir := filepath.Join("/sys/fs/cgroup", c)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("make mount point for the %s controller: %w", c, err)
		}
		// Fails with EBUSY if a v2 cgroup has the controller enabled: then it cannot move.
		if err := unix.Mount("cgroup", dir, "cgroup", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, c); err != nil {
			return fmt.Errorf("move the %s controller to cgroup v1 (mount at %s): %w", c, dir, err)
		}
	}
	data, err = os.ReadFile(controllersFile)
	if err != nil {
		return fmt.Errorf("read cgroup v2 controllers: %w", err)
	}
	if left := strings.TrimSpace(string(data)); left != "" {
		return fmt.Errorf("controllers still in cgroup v2 after moving them to v1: %s", left)
	}
	return nil
}
