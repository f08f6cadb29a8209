package resctrlsim

import (
	"errors"
	"os"
	"testing"
)

// MountT mounts a simulator in a fresh directory for a test and unmounts it when the test
// ends. Where the host cannot run it (no root, no /dev/fuse) the test is skipped, unless
// RESCTRLSIM_REQUIRE=1 (as in CI), where it fails: a suite that silently skipped would prove
// nothing.
func MountT(t testing.TB, opts Options) *Sim {
	t.Helper()
	// Not t.TempDir: its removal would race the unmount, and a short path keeps mountinfo
	// readable.
	dir, err := os.MkdirTemp("", "resctrlsim-")
	if err != nil {
		t.Fatal(err)
	}
	sim, err := Mount(dir, opts)
	if errors.Is(err, ErrPreflight) && os.Getenv("RESCTRLSIM_REQUIRE") != "1" {
		_ = os.Remove(dir)
		t.Skip(err)
	}
	if err != nil {
		_ = os.Remove(dir)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sim.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove mount point: %v", err)
		}
	})
	return sim
}
