package exporter_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// On a simulator in mbm_event mode with counters for two pods of three: the two have
// bandwidth series and mbm_assigned 1, the third none and mbm_assigned 0 (no read error);
// the node's counters are exported. Then a counter moves from the first pod to the third:
// the third's series appear, counted from zero (an assignment reset), the first's go. Swept
// over AMD ABMC's mbm_event mode and Arm MPAM's fixed one (mbm_assign_mode "[mbm_event]"
// alone): the exporter reads and exports the same on both.
func TestCollectAssignmentOnSim(t *testing.T) {
	t.Parallel()
	for name, fixed := range map[string]bool{"abmc": false, "mpam-fixed": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// Six counters: the root holds two, each of the first two pods two.
			collectAssignmentOnSim(t, resctrlsim.Options{MBMAssign: resctrlsim.MBMAssignEvent, MPAMFixed: fixed, MBMCounters: 6})
		})
	}
}

func collectAssignmentOnSim(t *testing.T, o resctrlsim.Options) {
	e := newEnvOn(t, nil, o)
	const uidLate = "6a1f3c2e-0000-4000-8000-00000000000c"
	e.place(t, uidBusy, "busy", proctest.Start(t, proctest.Sleep))
	e.place(t, uidIdle, "idle", proctest.Start(t, proctest.Sleep))
	e.place(t, uidLate, "late", proctest.Start(t, proctest.Spin))
	series := func(f map[string]*dto.MetricFamily, name, uid string) int { return len(find(f[name], group(uid))) }

	fams := e.gather(t)
	for _, tc := range []struct {
		uid      string
		assigned float64
	}{{uidBusy, 1}, {uidIdle, 1}, {uidLate, 0}} {
		for _, counter := range []string{"mbm_total_bytes", "mbm_local_bytes"} {
			if got := one(t, fams, "resctrl_mon_mbm_assigned", group(tc.uid), "counter="+counter, "resource=L3", "domain=0"); got != tc.assigned {
				t.Errorf("%s %s: mbm_assigned %v, want %v", tc.uid, counter, got, tc.assigned)
			}
		}
		want := int(tc.assigned)
		for _, name := range []string{"resctrl_mon_mbm_total_bytes_total", "resctrl_mon_mbm_local_bytes_total"} {
			if got := series(fams, name, tc.uid); got != want {
				t.Errorf("%s of %s: %d series, want %d", name, tc.uid, got, want)
			}
		}
		if got := series(fams, "resctrl_mon_llc_occupancy_bytes", tc.uid); got != 1 {
			t.Errorf("llc_occupancy of %s: %d series, want 1 (it needs no counter)", tc.uid, got)
		}
	}
	if got := sum(find(fams["resctrl_mon_mon_data_read_errors_total"], "reason=Unassigned")); got != 0 {
		t.Errorf("Unassigned counted as %v read errors", got)
	}
	if n, a := one(t, fams, "resctrl_mon_mbm_counters", "resource=L3", "domain=0"), one(t, fams, "resctrl_mon_mbm_counters_available", "resource=L3", "domain=0"); n != 6 || a != 0 {
		t.Errorf("node counters %v, available %v; want 6 and 0", n, a)
	}

	// The counters move from the busy pod to the late one (what a policy would do): given up
	// first, or the late pod's write finds none free.
	for _, w := range []struct{ uid, text string }{
		{uidBusy, "mbm_total_bytes:*=_\nmbm_local_bytes:*=_\n"},
		{uidLate, "mbm_total_bytes:*=e\nmbm_local_bytes:*=e\n"},
	} {
		if err := os.WriteFile(filepath.Join(e.sim.Dir, "mon_groups", w.uid, "mbm_L3_assignments"), []byte(w.text), 0); err != nil {
			t.Fatal(err)
		}
	}
	fams = e.waitFor(t, "the late pod's bandwidth", func(f map[string]*dto.MetricFamily) bool {
		return sum(find(f["resctrl_mon_mbm_total_bytes_total"], group(uidLate))) > 0
	})
	if got := series(fams, "resctrl_mon_mbm_total_bytes_total", uidBusy); got != 0 {
		t.Errorf("the pod that gave its counter up still has %d series", got)
	}
	if got := one(t, fams, "resctrl_mon_mbm_assigned", group(uidBusy), "counter=mbm_total_bytes"); got != 0 {
		t.Errorf("the pod that gave its counter up: mbm_assigned %v", got)
	}
	if got := one(t, fams, "resctrl_mon_mon_data_resets_total", "cause=assignment"); got < 2 {
		t.Errorf("assignment resets %v, want one per counter the late pod got (2)", got)
	}
	if got := one(t, fams, "resctrl_mon_mon_data_resets_total", "cause=decrease"); got != 0 {
		t.Errorf("decrease resets %v: an assignment taken for a step back", got)
	}
	problems, err := testutil.GatherAndLint(e.reg, "resctrl_mon_mbm_assigned", "resctrl_mon_mbm_counters", "resctrl_mon_mbm_counters_available")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}
