// Package resctrlfs checks that a path really is a resctrl mount before anything writes to it,
// and reads the kernel's explanation of the last failed command.
package resctrlfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// ErrNotResctrl is wrapped by Check's errors when the path is not a usable resctrl mount.
var ErrNotResctrl = errors.New("not a resctrl mount")

// SimulatorType is the mountinfo type of the project's resctrl simulator (test/resctrlsim),
// which hosts without RDT hardware use in its place.
const SimulatorType = "fuse.resctrl"

// Check verifies that root is a resctrl mount with monitoring: a real directory (not a
// symlink, which could point anywhere), the resctrl filesystem by its statfs magic (as runc's
// intelrdt finds it) or the simulator by its mountinfo type, and info/L3_MON present.
func Check(root string) error {
	if !filepath.IsAbs(root) {
		return fmt.Errorf("resctrl root %q: %w: not an absolute path", root, ErrNotResctrl)
	}
	fi, err := os.Lstat(root)
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
	if st.Type != unix.RDTGROUP_SUPER_MAGIC {
		typ, err := mountType(root)
		if err != nil {
			return fmt.Errorf("resctrl root %s: %w", root, err)
		}
		if typ != SimulatorType {
			return fmt.Errorf("resctrl root %s: %w (filesystem type %q; mount it with: mount -t resctrl resctrl %s)", root, ErrNotResctrl, typ, root)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "info", "L3_MON")); err != nil {
		return fmt.Errorf("resctrl root %s: no monitoring support (info/L3_MON): %w", root, err)
	}
	return nil
}

// mountType is the filesystem type of the mount whose mount point is exactly path, or ""
// when path is not a mount point. The last entry wins: it is mounted on top.
func mountType(path string) (string, error) {
	ms, err := mountinfo.GetMounts(func(i *mountinfo.Info) (skip, stop bool) { return i.Mountpoint != path, false })
	if err != nil {
		return "", fmt.Errorf("read mountinfo: %w", err)
	}
	if len(ms) == 0 {
		return "", nil
	}
	return ms[len(ms)-1].FSType, nil
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
