// Package resctrlfs checks that a path really is a resctrl mount before anything writes to it,
// and reads the kernel's explanation of the last failed command.
package resctrlfs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
// when path is not a mount point.
func mountType(path string) (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("read mountinfo: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	typ := ""
	for sc.Scan() {
		// "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw": the mount
		// point is field 5, the type follows the " - " separator. Later lines win: they
		// are mounted on top.
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if ok && len(f) >= 5 && len(g) >= 1 && unescape(f[4]) == path {
			typ = g[0]
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read mountinfo: %w", err)
	}
	return typ, nil
}

// unescape undoes mountinfo's octal escapes of space, tab, newline and backslash.
func unescape(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
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
