package resctrlfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	if err := resctrlfs.Check(sim.Dir); err != nil {
		t.Errorf("the simulator: %v", err)
	}
	if s := resctrlfs.LastCmdStatus(sim.Dir); s != "ok" {
		t.Errorf("last_cmd_status %q", s)
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(sim.Dir, link); err != nil {
		t.Fatal(err)
	}
	// Not mounted (nothing of resctrl's there) is told apart from the faults.
	for name, tc := range map[string]struct {
		path       string
		notMounted bool
	}{
		"plain directory": {dir, true},
		"missing":         {filepath.Join(dir, "missing"), true},
		"symlink":         {link, false},
		"relative":        {"sys/fs/resctrl", false},
		"inside a mount":  {filepath.Join(sim.Dir, "info"), false},
	} {
		err := resctrlfs.Check(tc.path)
		if !errors.Is(err, resctrlfs.ErrNotResctrl) || errors.Is(err, resctrlfs.ErrNotMounted) != tc.notMounted {
			t.Errorf("%s: %v (not mounted: want %v)", name, err, tc.notMounted)
		}
	}
}

// FuzzLastCmdStatus: the kernel's text goes into error messages whole or not at all: at most
// 4096 bytes, trimmed, never text the file did not hold.
func FuzzLastCmdStatus(f *testing.F) {
	for _, s := range []string{"ok\n", "Out of RMIDs\n", "  No task 42\n\n", "", "\n", strings.Repeat("x", 4097), strings.Repeat(" ", 4096) + "y"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "info"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "info", "last_cmd_status"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		got := resctrlfs.LastCmdStatus(root)
		if len(got) > 4096 || strings.TrimSpace(got) != got || !strings.Contains(string(b), got) {
			t.Errorf("%q from %q", got, b)
		}
		if len(b) <= 4096 && strings.TrimSpace(string(b)) != "" && got == "" {
			t.Errorf("%q lost", b)
		}
		if len(b) > 4096 && got != "" {
			t.Errorf("%d bytes taken whole", len(b))
		}
	})
}
