// Package resctrlfs checks that a path really is a resctrl mount before anything writes to it,
// and reads the kernel's explanation of the last failed command.
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

// SimulatorFiles is how the project's resctrl simulator (test/resctrlsim), which hosts
// without RDT hardware use in resctrl's place, signs its statfs: a FUSE mount whose f_files is
// resctrl's magic number. The statfs call is made anyway, so telling the two apart costs
// nothing; reading /proc/self/mountinfo for the simulator's type did, on every hook call.
const SimulatorFiles = unix.RDTGROUP_SUPER_MAGIC

// Check verifies that root is a resctrl mount with monitoring: a real directory (not a
// symlink, which could point anywhere), the resctrl filesystem by its statfs magic (as runc's
// intelrdt finds it) or the simulator by its signature, and info/L3_MON present.
func Check(root string) error {
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
