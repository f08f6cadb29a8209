package exporter_test

import (
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestLazy: before any hook made the state dir, the source says why it cannot read; once
// the dir is there it reads, without a restart.
func TestLazy(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	cfg := config.Default()
	cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir = sim.Dir, filepath.Join(t.TempDir(), "state"), ""
	cfg.ResctrlSimulator = true
	l := exporter.NewLazy(cfg, resctrlfs.MountFor(cfg.ResctrlSimulator))
	if _, err := l.Pods(inventory.Options{}); err == nil {
		t.Fatal("read pods from a state dir that does not exist")
	}
	if _, err := lifecycle.New(cfg, slog.New(slog.DiscardHandler), kernel.Open); err != nil {
		t.Fatal(err)
	}
	if pods, err := l.Pods(inventory.Options{}); err != nil || len(pods) != 0 {
		t.Errorf("pods %v, %v; want none and no error", pods, err)
	}
	if r, err := l.RMIDs(); err != nil || r.Total != 64 {
		t.Errorf("rmids %+v, %v", r, err)
	}
}
