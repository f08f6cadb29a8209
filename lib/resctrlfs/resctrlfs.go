// Package resctrlfs is Linux resctrl as the project uses it, the one seam between what
// lib/lifecycle decides and the file system:
//
//   - the mount check (Check, CheckSimulator, MountFor): a path is a real resctrl mount, or
//     the tests' simulator where the configuration says so, before anything writes to it,
//     and the kernel's explanation of the last failed command (info/last_cmd_status);
//   - monitoring groups (Groups, implemented by Kernel through goresctrl's pkg/monitor):
//     made, found, removed, their tasks written (TaskWriter, keeping one open tasks file per
//     group, tasksfiles.go);
//   - the counters (MonReader and Reading, mondata.go): every monitoring domain's files,
//     with a missing sample said as such, never a zero;
//   - the kernel's limbo (LimboThreshold): whether a removal frees an RMID at once;
//   - counter assignment (Linux ≥ 6.18, AMD ABMC and Arm MPAM): the mode
//     (ReadAssignment) and each group's assignments (ReadGroupAssignment,
//     WriteAssignment).
package resctrlfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrNotResctrl is wrapped by Check's errors when the path is not a usable resctrl mount.
var ErrNotResctrl = errors.New("not a resctrl mount")

// ErrNotMounted (which wraps ErrNotResctrl) is wrapped when there is no resctrl at the path at
// all: no such directory, or another filesystem. On a host without RDT, or before resctrl is
// mounted, that is a state a periodic job can skip, where a symlink or a resctrl without
// monitoring is a fault to report.
var ErrNotMounted = fmt.Errorf("%w: resctrl not mounted there", ErrNotResctrl)

// ErrSimulator (which wraps ErrNotResctrl) is wrapped by Check's error when the path is the
// project's resctrl simulator, which only CheckSimulator accepts.
var ErrSimulator = fmt.Errorf("%w: a resctrl simulator (FUSE) is mounted there; set resctrlSimulator: true to use it (demos and tests only)", ErrNotResctrl)

// SimulatorFiles is how the project's resctrl simulator (test/resctrlsim), which hosts
// without RDT hardware use in resctrl's place, signs its statfs: a FUSE mount whose f_files is
// resctrl's magic number. The statfs call is made anyway, so telling the two apart costs
// nothing; reading /proc/self/mountinfo for the simulator's type did, on every hook call.
const SimulatorFiles = unix.RDTGROUP_SUPER_MAGIC

// Mount is a mount check, injected where resctrl is opened: Check in production,
// CheckSimulator where the configuration allows the simulator (MountFor).
type Mount func(root string) error

// MountFor is the check a configuration asks for: the resctrlSimulator key (simulator) opts
// in to the simulator. Opt-in, so that no production binary writes to a FUSE file system
// that merely signs itself as the simulator.
func MountFor(simulator bool) Mount {
	if simulator {
		return CheckSimulator
	}
	return Check
}

// Check verifies that root is a resctrl mount with monitoring: a real directory (not a
// symlink, which could point anywhere), the resctrl filesystem by its statfs magic (as runc's
// intelrdt finds it), and info/L3_MON present. The simulator is refused with ErrSimulator.
func Check(root string) error { return check(root, false) }

// CheckSimulator is Check that also accepts the project's resctrl simulator by its signature
// (SimulatorFiles): for demos and tests on hosts without RDT (the resctrlSimulator key).
func CheckSimulator(root string) error { return check(root, true) }

func check(root string, simulatorOK bool) error {
	if !filepath.IsAbs(root) {
		return fmt.Errorf("resctrl root %q: %w: not an absolute path", root, ErrNotResctrl)
	}
	fi, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("resctrl root %s: %w: %w", root, ErrNotMounted, err)
	}
	if err != nil {
		return fmt.Errorf("resctrl root %s: %w: %w", root, ErrNotResctrl, err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("resctrl root %s: %w: it is a symlink", root, ErrNotResctrl)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil {
		return fmt.Errorf("resctrl root %s: statfs: %w", root, err)
	}
	simulator := st.Type == unix.FUSE_SUPER_MAGIC && st.Files == SimulatorFiles
	if simulator && !simulatorOK {
		return fmt.Errorf("resctrl root %s: %w", root, ErrSimulator)
	}
	if st.Type != unix.RDTGROUP_SUPER_MAGIC && !simulator {
		return fmt.Errorf("resctrl root %s: %w (filesystem magic %#x; mount it with: mount -t resctrl resctrl %s)", root, ErrNotMounted, st.Type, root)
	}
	if _, err := os.Stat(filepath.Join(root, "info", "L3_MON")); err != nil {
		return fmt.Errorf("resctrl root %s: %w: no monitoring support (info/L3_MON): %w", root, ErrNotResctrl, err)
	}
	return nil
}

// LastCmdStatus returns the kernel's text about the last failed resctrl command, or "" when
// it cannot be read. Errors are worth more with it: "Out of RMIDs", "No task 42".
func LastCmdStatus(root string) string {
	b, err := os.ReadFile(filepath.Join(root, "info", "last_cmd_status"))
	if err != nil || len(b) > 4096 {
		return ""
	}
	return strings.TrimSpace(string(b))
}
