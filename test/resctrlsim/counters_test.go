package resctrlsim_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

func counter(t *testing.T, path string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.TrimSpace(read(t, path)), 64)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// A group whose tasks burn CPU counts memory traffic, cache occupancy and energy; an idle
// group does not; cumulative counters never step back; the root counts tasks in no group.
func TestCountersFollowCPUTime(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{PerfPkgDomains: 1})
	d := sim.Dir
	busy, idle := filepath.Join(d, "mon_groups/busy"), filepath.Join(d, "mon_groups/idle")
	mustMkdir(t, busy)
	mustMkdir(t, idle)
	spin := start(t, "sh", "-c", "while :; do :; done").Process.Pid
	nap := start(t, "sleep", "60").Process.Pid
	if err := write(busy+"/tasks", itoa(spin)); err != nil {
		t.Fatal(err)
	}
	if err := write(idle+"/tasks", itoa(nap)); err != nil {
		t.Fatal(err)
	}
	l3 := func(g, name string) float64 { return counter(t, filepath.Join(g, "mon_data/mon_L3_00", name)) }
	pkg := func(g, name string) float64 { return counter(t, filepath.Join(g, "mon_data/mon_PERF_PKG_00", name)) }

	eventually(t, "the busy group to count traffic", func() bool { return l3(busy, "mbm_total_bytes") > 0 })
	first := l3(busy, "mbm_total_bytes")
	eventually(t, "the busy group's traffic to grow", func() bool { return l3(busy, "mbm_total_bytes") > first })
	if l3(busy, "llc_occupancy") == 0 {
		t.Errorf("a busy group occupies no cache")
	}
	if e := pkg(busy, "core_energy"); e <= 0 || pkg(busy, "activity") <= 0 {
		t.Errorf("a busy group used no energy (%v) or activity", e)
	}
	for _, name := range []string{"mbm_total_bytes", "mbm_local_bytes", "llc_occupancy"} {
		if v := l3(idle, name); v != 0 {
			t.Errorf("idle group %s = %v, want 0", name, v)
		}
	}
	if pkg(idle, "core_energy") != 0 {
		t.Errorf("idle group used energy")
	}
	// Local first: the total, read after it, can only have grown since.
	if loc, tot := l3(busy, "mbm_local_bytes"), l3(busy, "mbm_total_bytes"); loc > tot || loc == 0 {
		t.Errorf("mbm_local_bytes %v is not a nonzero part of mbm_total_bytes %v", loc, tot)
	}
	// Monotonic: many reads, never a step back.
	prev := 0.0
	for range 20 {
		v := l3(busy, "mbm_total_bytes")
		if v < prev {
			t.Fatalf("mbm_total_bytes stepped back: %v after %v", v, prev)
		}
		prev = v
	}
	// The spinner leaves: its group stops growing, the root starts.
	if err := write(filepath.Join(d, "tasks"), itoa(spin)); err != nil {
		t.Fatal(err)
	}
	stopped := l3(busy, "mbm_total_bytes")
	rootBefore := counter(t, filepath.Join(d, "mon_data/mon_L3_00/mbm_total_bytes"))
	eventually(t, "the root to count the spinner", func() bool {
		return counter(t, filepath.Join(d, "mon_data/mon_L3_00/mbm_total_bytes")) > rootBefore+1e8
	})
	if got := l3(busy, "mbm_total_bytes"); got != stopped {
		t.Errorf("the emptied group kept counting: %v after %v", got, stopped)
	}
}

// Children forked inside a group are charged to it, even when they have exited by the time
// the counter is read.
func TestCountersIncludeChildren(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{SettleInterval: 100 * time.Millisecond})
	g := filepath.Join(sim.Dir, "mon_groups/g")
	mustMkdir(t, g)
	gate := filepath.Join(t.TempDir(), "gate")
	// The shell waits for the gate, then runs three short CPU-bound children in turn.
	sh := start(t, "sh", "-c", `while [ ! -e "$0" ]; do sleep 0.01; done
		for i in 1 2 3; do sh -c 'n=0; while [ $n -lt 100000 ]; do n=$((n+1)); done'; done
		echo done > "$0.done"; sleep 60`, gate)
	if err := write(g+"/tasks", itoa(sh.Process.Pid)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the workers to finish", func() bool { _, err := os.Stat(gate + ".done"); return err == nil })
	// Every worker has exited; their CPU time must be in the group all the same.
	if got := counter(t, filepath.Join(g, "mon_data/mon_L3_00/mbm_total_bytes")); got == 0 {
		t.Errorf("the group counted nothing for the children it forked")
	}
	for _, id := range ids(t, g+"/tasks") {
		if _, err := os.Stat(filepath.Join("/proc", itoa(id))); err != nil {
			t.Errorf("group lists %d, which has exited", id)
		}
	}
}
