package top_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/lib/top"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

const (
	uidBusy = "6a1f3c2e-0000-4000-8000-00000000000a"
	uidIdle = "6a1f3c2e-0000-4000-8000-00000000000b"
)

// env is a simulator with 2 L3 and 1 PERF_PKG (AET) domains, a real state dir, and a
// lifecycle manager placing real processes.
type env struct {
	sim *resctrlsim.Sim
	m   *lifecycle.Manager
	inv *inventory.Inventory
}

func newEnv(t *testing.T) *env {
	t.Helper()
	sim := resctrlsim.MountT(t, resctrlsim.Options{PerfPkgDomains: 1, L3Domains: 2})
	cfg := config.Default()
	cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir = sim.Dir, filepath.Join(t.TempDir(), "state"), ""
	cfg.ResctrlSimulator = true
	m, err := lifecycle.New(cfg, slog.New(slog.DiscardHandler), kernel.Open)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Open(cfg, resctrlfs.MountFor(cfg.ResctrlSimulator))
	if err != nil {
		t.Fatal(err)
	}
	return &env{sim: sim, m: m, inv: inv}
}

func (e *env) place(t *testing.T, uid string, pid int) {
	t.Helper()
	a := map[string]string{identity.CRIOPodUID: uid, identity.CRIOSandboxID: strings.Repeat(uid[len(uid)-1:], 64),
		identity.CRIOContainerType: "container", identity.CRIOPodNamespace: "shop", identity.CRIOPodName: "pod-" + uid[len(uid)-1:]}
	idn, err := identity.FromAnnotations("c-"+uid, a)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := e.m.Place(lifecycle.Placement{ContainerID: "c-" + uid, Pid: pid, Pod: idn, Annotations: a}); err != nil {
		t.Fatalf("place %s: %+v, %v", uid, out, err)
	}
}

// TestTopOnSim: a spinning pod ranks above a sleeping one under --sort bw, every column is
// filled, and the first frame already has rates.
func TestTopOnSim(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.place(t, uidIdle, proctest.Start(t, proctest.Sleep))
	e.place(t, uidBusy, proctest.Start(t, proctest.Spin))
	var b strings.Builder
	if err := top.Run(context.Background(), &b, top.NewSampler(e.inv, &cgroup.Host{}), top.Options{Interval: time.Second, Frames: 1, Sort: top.SortBW}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "POD ") || !strings.HasPrefix(lines[2], "shop/pod-a ") || !strings.HasPrefix(lines[3], "shop/pod-b ") {
		t.Fatalf("want a header and the busy pod first:\n%s", out)
	}
	t.Logf("\n%s", out)
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		// name, state, bandwidth, llc, energy "W", cpu, mem, io: no blank and no "-".
		if len(f) != 9 || f[1] != "active" || !strings.HasSuffix(f[2], "/s") || f[5] != "W" {
			t.Errorf("row %q: want every column filled", l)
		}
	}
	busy := strings.Fields(lines[2])
	if cpu, err := strconv.ParseFloat(busy[6], 64); err != nil || cpu <= 0 {
		// A spinning shell on a 2-core machine shared with other tests waits for the CPU
		// some of the time, but not never: PSI "some" counts it.
		t.Logf("busy pod's cpu pressure %q (it may have had a core to itself)", busy[6])
	}
}

// TestRatesMatchSim: the rates a frame shows are the simulator's counters' increase over the
// frame's interval, exactly. The processes are stopped (SIGSTOP) while each sample is read,
// so the raw files this test reads and top's sample hold the same numbers.
func TestRatesMatchSim(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	busy, idle := proctest.Start(t, proctest.Spin), proctest.Start(t, proctest.Sleep)
	e.place(t, uidBusy, busy)
	e.place(t, uidIdle, idle)
	s := top.NewSampler(e.inv, &cgroup.Host{})
	dir := filepath.Join(e.sim.Dir, "mon_groups", uidBusy)

	stop(t, busy)
	raw0, s0 := sumRaw(t, dir), s.Sample()
	cont(t, busy)
	waitCPU(t, busy, 300*time.Millisecond)
	stop(t, busy)
	raw1, s1 := sumRaw(t, dir), s.Sample()
	after := sumRaw(t, dir)
	cont(t, busy)

	f := top.NewFrame(s0, s1)
	top.Sort(f.Rows, top.SortBW)
	if len(f.Rows) != 2 || f.Rows[0].UID != uidBusy {
		t.Fatalf("rows %+v: want the busy pod first", f.Rows)
	}
	r, dt := f.Rows[0], f.Interval.Seconds()
	for _, c := range []struct {
		col  string
		cell top.Cell
		want float64
	}{
		{"bandwidth", r.BW, (raw1.mbm - raw0.mbm) / dt},
		{"energy", r.Energy, (raw1.energy - raw0.energy) / dt},
	} {
		if c.cell.Kind != top.Value || c.want <= 0 || math.Abs(c.cell.V-c.want) > 1e-9*c.want {
			t.Errorf("%s: %+v, want %v (the simulator's %v→%v over %s)", c.col, c.cell, c.want, raw0, raw1, f.Interval)
		}
	}
	// Occupancy is a gauge that drains with time even while the pod is stopped, so the
	// sample's lies between the raw readings just before and just after it (a fixed margin
	// around one of them failed when a loaded machine took long between the reads); the
	// simulator shows it in 64 KiB steps, per domain.
	if r.LLC.Kind != top.Value || r.LLC.V > raw1.llc+2*64<<10 || r.LLC.V < after.llc-2*64<<10 {
		t.Errorf("llc: %+v, want between %v and %v", r.LLC, after.llc, raw1.llc)
	}
	if r.CPU.Kind != top.Value || r.Memory.Kind != top.Value || r.IO.Kind != top.Value {
		t.Errorf("pressure cells %+v %+v %+v: want numbers on a host with PSI", r.CPU, r.Memory, r.IO)
	}
	// What is printed is what was computed.
	var b strings.Builder
	if err := top.Render(&b, f, top.RenderOptions{Sort: top.SortBW}); err != nil {
		t.Fatal(err)
	}
	want := []string{"shop/pod-a", "active", top.FormatBytes((raw1.mbm-raw0.mbm)/dt) + "/s", top.FormatBytes(r.LLC.V),
		strconv.FormatFloat((raw1.energy-raw0.energy)/dt, 'f', 1, 64), "W"}
	lines := strings.Split(b.String(), "\n")
	if got := strings.Fields(lines[2]); len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Errorf("printed\n%s\nwant the busy pod's row to start %q", b.String(), want)
	}
}

// TestRemadeGroup: a group removed and made again behind resctrl-mon's back restarts its
// counters near 0: that frame shows "-", never a negative rate, and the next a rate again.
func TestRemadeGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pid := proctest.Start(t, proctest.Spin)
	e.place(t, uidBusy, pid)
	s := top.NewSampler(e.inv, &cgroup.Host{})
	waitCPU(t, pid, 100*time.Millisecond)
	s0 := s.Sample()
	dir := filepath.Join(e.sim.Dir, "mon_groups", uidBusy)
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tasks"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	s1 := s.Sample()
	r := top.NewFrame(s0, s1).Rows[0]
	if r.BW.Kind != top.Skip || r.Energy.Kind != top.Skip {
		t.Errorf("after the group was re-made: bandwidth %+v, energy %+v; want \"-\" (the counters went down)", r.BW, r.Energy)
	}
	waitCPU(t, pid, 100*time.Millisecond)
	r = top.NewFrame(s1, s.Sample()).Rows[0]
	if r.BW.Kind != top.Value || r.BW.V <= 0 {
		t.Errorf("the frame after: bandwidth %+v, want a rate", r.BW)
	}
}

// TestNoPSIOnSim: a host whose kernel keeps no pressure shows blank pressure columns, says
// why, and shows the counters.
func TestNoPSIOnSim(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.place(t, uidIdle, proctest.Start(t, proctest.Sleep))
	s := top.NewSampler(e.inv, &cgroup.Host{Proc: t.TempDir()})
	if s.NoPSI == "" {
		t.Fatal("no note about the missing PSI")
	}
	r := top.NewFrame(s.Sample(), s.Sample()).Rows[0]
	if r.CPU != (top.Cell{}) || r.Memory != (top.Cell{}) || r.IO != (top.Cell{}) || r.LLC.Kind != top.Value || r.BW.Kind != top.Value {
		t.Errorf("row %+v: want blank pressure and the counters", r)
	}
}

type raw struct{ mbm, energy, llc float64 }

// sumRaw reads the group's counter files itself, summed over domains.
func sumRaw(t *testing.T, dir string) raw {
	t.Helper()
	var r raw
	for _, c := range []struct {
		glob string
		to   *float64
	}{{"mon_L3_*/mbm_total_bytes", &r.mbm}, {"mon_PERF_PKG_*/core_energy", &r.energy}, {"mon_L3_*/llc_occupancy", &r.llc}} {
		files, _ := filepath.Glob(filepath.Join(dir, "mon_data", c.glob))
		if len(files) == 0 {
			t.Fatalf("no %s in %s", c.glob, dir)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
			if err != nil {
				t.Fatal(err)
			}
			*c.to += v
		}
	}
	return r
}

// stop stops pid and waits until it is stopped: from then on its CPU time, and so the
// simulator's counters of its group, stand still.
func stop(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStat(t, pid, "stopped", func(state string, _ time.Duration) bool { return state == "T" })
}

func cont(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// waitCPU waits until pid has used d more CPU time.
func waitCPU(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	var from time.Duration = -1
	waitStat(t, pid, "CPU time", func(_ string, cpu time.Duration) bool {
		if from < 0 {
			from = cpu
		}
		return cpu-from >= d
	})
}

// waitStat polls /proc/<pid>/stat (state, utime+stime) until cond holds.
func waitStat(t *testing.T, pid int, what string, cond func(state string, cpu time.Duration) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		if cond(f[0], time.Duration(ut+st)*10*time.Millisecond) { // USER_HZ is 100 on Linux
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for pid %d: %s", pid, what)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition with a deadline
	}
}
