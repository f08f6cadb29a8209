// Package simenv gives a test its own resctrl: a mounted simulator and a configuration that
// points the project at it, its state and snapshot directories fresh for the test. Every test
// that runs the project on the simulator (the lifecycle, the NRI adapter, the exporter, the
// hooks end to end) starts from it, so they all meet the same layout.
package simenv

import (
	"path/filepath"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// Env is one test's simulator and configuration.
type Env struct {
	Sim *resctrlsim.Sim
	// Dir is the test's temporary directory that holds StateDir and SnapshotDir; a test may
	// put its own files (a config file, a log) beside them.
	Dir string
	// Config is config.Default with ResctrlRoot on the simulator (ResctrlSimulator set, so
	// the mount check accepts it), StateDir and SnapshotDir in Dir, and the log on stderr (go
	// test shows it with the failing test).
	Config config.Config
}

// New mounts a simulator with options o, unmounted when the test ends (it skips or fails
// as resctrlsim.MountT does without root or FUSE), and builds its Env.
func New(t testing.TB, o resctrlsim.Options) *Env {
	t.Helper()
	sim := resctrlsim.MountT(t, o)
	dir := t.TempDir()
	cfg := config.Default()
	cfg.ResctrlRoot = sim.Dir
	cfg.ResctrlSimulator = true
	cfg.StateDir = filepath.Join(dir, "state")
	cfg.SnapshotDir = filepath.Join(dir, "snap")
	cfg.Log = "stderr"
	return &Env{Sim: sim, Dir: dir, Config: cfg}
}
