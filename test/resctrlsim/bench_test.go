package resctrlsim_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// BenchmarkSimulator times operations on the simulator against the same system calls on a
// tmpfs file, measured in the same loop, and reports the ratio: what a test pays for going
// through FUSE and the model. Run with `make bench`.
func BenchmarkSimulator(b *testing.B) {
	sim := resctrlsim.MountT(b, resctrlsim.Options{SettleInterval: -1})
	g := filepath.Join(sim.Dir, "mon_groups/g")
	if err := os.Mkdir(g, 0o755); err != nil {
		b.Fatal(err)
	}
	base := filepath.Join(b.TempDir(), "tasks")
	if err := os.WriteFile(base, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	pid := []byte(itoa(os.Getpid()))
	for _, tc := range []struct {
		name      string
		sim, base func() error
	}{
		{"tasks-write", func() error { return write(g+"/tasks", string(pid)) }, func() error { return write(base, string(pid)) }},
		{"tasks-read", func() error { _, err := os.ReadFile(g + "/tasks"); return err }, func() error { _, err := os.ReadFile(base); return err }},
		{"counter-read", func() error {
			_, err := os.ReadFile(g + "/mon_data/mon_L3_00/mbm_total_bytes")
			return err
		}, func() error { _, err := os.ReadFile(base); return err }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var simT, baseT time.Duration
			for b.Loop() {
				t0 := time.Now()
				if err := tc.base(); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := tc.sim(); err != nil {
					b.Fatal(err)
				}
				simT += time.Since(t1)
				baseT += t1.Sub(t0)
			}
			b.ReportMetric(float64(simT)/float64(b.N), "sim-ns/op")
			b.ReportMetric(float64(baseT)/float64(b.N), "tmpfs-ns/op")
			b.ReportMetric(float64(simT)/float64(baseT), "x-tmpfs")
		})
	}
}
