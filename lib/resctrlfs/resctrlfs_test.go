package resctrlfs_test

import (
	"errors"
	"os"
	"path/filepath"
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
