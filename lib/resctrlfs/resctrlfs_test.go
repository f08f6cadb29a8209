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
	for name, p := range map[string]string{
		"plain directory": dir,
		"symlink":         link,
		"missing":         filepath.Join(dir, "missing"),
		"relative":        "sys/fs/resctrl",
		"inside a mount":  filepath.Join(sim.Dir, "info"),
	} {
		if err := resctrlfs.Check(p); !errors.Is(err, resctrlfs.ErrNotResctrl) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
