package resctrlsim

import (
	"errors"
	"fmt"
	"os"
	"sync"
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
	// The simulator's diagnostics (lost proc events, ambiguous threads) are shown when the
	// test fails; they may explain it.
	var logMu sync.Mutex
	var logged []string
	if opts.Logf == nil {
		opts.Logf = func(format string, args ...any) {
			logMu.Lock()
			defer logMu.Unlock()
			if len(logged) < 100 {
				logged = append(logged, fmt.Sprintf(format, args...))
			}
		}
	}
	t.Cleanup(func() { // runs after the unmount below: nothing logs any more
		if t.Failed() {
			logMu.Lock()
			defer logMu.Unlock()
			for _, l := range logged {
				t.Log("resctrlsim:", l)
			}
		}
	})
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
