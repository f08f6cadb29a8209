package resctrlfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	if err := resctrlfs.CheckSimulator(sim.Dir); err != nil {
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
		for check, f := range map[string]resctrlfs.Mount{"Check": resctrlfs.Check, "CheckSimulator": resctrlfs.CheckSimulator} {
			err := f(tc.path)
			if !errors.Is(err, resctrlfs.ErrNotResctrl) || errors.Is(err, resctrlfs.ErrNotMounted) != tc.notMounted {
				t.Errorf("%s: %s: %v (not mounted: want %v)", check, name, err, tc.notMounted)
			}
		}
	}
}

// The simulator is opt-in: Check (what a production configuration uses) refuses it, saying
// which key allows it, and MountFor gives the check the resctrlSimulator key asks for.
func TestCheckRefusesTheSimulator(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	for name, tc := range map[string]struct {
		check resctrlfs.Mount
		ok    bool
	}{
		"Check":           {resctrlfs.Check, false},
		"CheckSimulator":  {resctrlfs.CheckSimulator, true},
		"MountFor(false)": {resctrlfs.MountFor(false), false},
		"MountFor(true)":  {resctrlfs.MountFor(true), true},
	} {
		err := tc.check(sim.Dir)
		if tc.ok {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if !errors.Is(err, resctrlfs.ErrSimulator) || !errors.Is(err, resctrlfs.ErrNotResctrl) || errors.Is(err, resctrlfs.ErrNotMounted) ||
			!strings.Contains(err.Error(), "set resctrlSimulator: true") || !strings.Contains(err.Error(), sim.Dir) {
			t.Errorf("%s: %v, want the simulator refused, naming the root and the key", name, err)
		}
	}
	// Open takes the check it is given; none is Check.
	if _, err := kernel.Open(sim.Dir, nil, func(string) bool { return true }, func(s string) string { return s }, nil); !errors.Is(err, resctrlfs.ErrSimulator) {
		t.Errorf("Open with no check: %v", err)
	}
	if _, err := kernel.Open(sim.Dir, resctrlfs.Check, func(string) bool { return true }, func(s string) string { return s }, nil); !errors.Is(err, resctrlfs.ErrSimulator) {
		t.Errorf("Open with Check: %v", err)
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
