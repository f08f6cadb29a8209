package lifecycle

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/lib/runtimes"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// BenchmarkReconcile: 1000 pods, each one container (a sleep in a cgroup of its own, with
// runc's state.json for it), each with its owned group. It reports the time per container of
// a steady-state reconcile (the timer's common case: everything in place) and of the first
// one (1000 groups made and filled), and the ratio to reading the runtime state alone,
// measured in the same run. Target: under 1 ms per container.
func BenchmarkReconcile(b *testing.B) {
	const n = 1000
	sim := resctrlsim.MountT(b, resctrlsim.Options{NumRMIDs: n + 10, SettleInterval: -1})
	dir := b.TempDir()
	cfg := config.Default()
	cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir = sim.Dir, filepath.Join(dir, "state"), ""
	cfg.ResctrlSimulator = true
	m, err := New(cfg, slog.New(slog.DiscardHandler), kernel.Open)
	if err != nil {
		b.Fatal(err)
	}
	root := filepath.Join(dir, "runc")
	cgroupRoot := "/sys/fs/cgroup/pids/resctrl-mon-bench-" + strconv.Itoa(os.Getpid())
	if err := os.Mkdir(cgroupRoot, 0o755); err != nil {
		b.Skipf("needs the cgroup v1 pids hierarchy: %v", err)
	}
	var cmds []*exec.Cmd
	b.Cleanup(func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		for i := range n {
			_ = os.Remove(filepath.Join(cgroupRoot, strconv.Itoa(i)))
		}
		_ = os.Remove(cgroupRoot)
	})
	for i := range n {
		c := exec.Command("sleep", "3600")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		cmds = append(cmds, c)
		cg := filepath.Join(cgroupRoot, strconv.Itoa(i))
		if err := os.Mkdir(cg, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(strconv.Itoa(c.Process.Pid)), 0o644); err != nil {
			b.Fatal(err)
		}
		st, err := procfs.ReadStat(c.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		id := fmt.Sprintf("c%04d", i)
		uid := fmt.Sprintf("%08x-0000-4000-8000-000000000000", i)
		state, _ := json.Marshal(map[string]any{"id": id, "init_process_pid": c.Process.Pid, "init_process_start": st.StartTime,
			"config": map[string]any{"labels": []string{"io.kubernetes.pod.uid=" + uid,
				"io.kubernetes.cri-o.SandboxID=" + fmt.Sprintf("%064x", i), "io.kubernetes.cri-o.ContainerType=container"}}})
		if err := os.MkdirAll(filepath.Join(root, id), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, id, "state.json"), state, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	discover := func() []runtimes.Container {
		live, err := runtimes.Live([]string{root})
		if err != nil || len(live) != n {
			b.Fatalf("live: %d, %v", len(live), err)
		}
		return live
	}
	t0 := time.Now()
	acts, err := m.Reconcile(discover(), ReconcileOptions{})
	first := time.Since(t0)
	if err != nil || len(acts) != n {
		b.Fatalf("first reconcile: %d actions, %v", len(acts), err)
	}
	var full, disc time.Duration
	for b.Loop() {
		t0 := time.Now()
		live := discover()
		disc += time.Since(t0)
		t1 := time.Now()
		acts, err := m.Reconcile(discover(), ReconcileOptions{})
		full += time.Since(t1)
		if err != nil || len(acts) != 0 {
			b.Fatalf("steady reconcile: %d actions, %v", len(acts), err)
		}
		_ = live
	}
	b.ReportMetric(float64(full.Microseconds())/float64(b.N*n), "µs/container")
	b.ReportMetric(float64(first.Microseconds())/n, "first-µs/container")
	b.ReportMetric(float64(full)/float64(disc), "x-discovery")
}
