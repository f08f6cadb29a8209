package exporter_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
)

const (
	uidBusy = "6a1f3c2e-0000-4000-8000-00000000000a"
	uidIdle = "6a1f3c2e-0000-4000-8000-00000000000b"
)

// TestCollectOnSim: every family with its type and labels, a busy pod's counters rising
// faster than an idle one's, and PSI for each container.
func TestCollectOnSim(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &cgroup.Host{})
	e.place(t, uidBusy, "busy", proctest.Start(t, proctest.Spin))
	e.place(t, uidIdle, "idle", proctest.Start(t, proctest.Sleep))
	fams := e.waitFor(t, "the busy pod's bandwidth", func(f map[string]*dto.MetricFamily) bool {
		return f["resctrl_mon_mbm_total_bytes_total"] != nil && sum(find(f["resctrl_mon_mbm_total_bytes_total"], group(uidBusy))) > 0
	})
	types := map[string]dto.MetricType{
		"resctrl_mon_llc_occupancy_bytes":                dto.MetricType_GAUGE,
		"resctrl_mon_mbm_total_bytes_total":              dto.MetricType_COUNTER,
		"resctrl_mon_mbm_local_bytes_total":              dto.MetricType_COUNTER,
		"resctrl_mon_core_energy_joules_total":           dto.MetricType_COUNTER,
		"resctrl_mon_activity_farads_total":              dto.MetricType_COUNTER,
		"resctrl_mon_pod_info":                           dto.MetricType_GAUGE,
		"resctrl_mon_groups":                             dto.MetricType_GAUGE,
		"resctrl_mon_rmids_used":                         dto.MetricType_GAUGE,
		"resctrl_mon_num_rmids":                          dto.MetricType_GAUGE,
		"resctrl_mon_snapshots":                          dto.MetricType_GAUGE,
		"resctrl_mon_snapshots_written_total":            dto.MetricType_COUNTER,
		"resctrl_mon_outcomes_total":                     dto.MetricType_COUNTER,
		"resctrl_mon_scrape_duration_seconds":            dto.MetricType_GAUGE,
		"resctrl_mon_pressure_available":                 dto.MetricType_GAUGE,
		"resctrl_mon_mon_data_resets_total":              dto.MetricType_COUNTER,
		"resctrl_mon_mon_data_read_errors_total":         dto.MetricType_COUNTER,
		"resctrl_mon_failures_total":                     dto.MetricType_COUNTER,
		"resctrl_mon_source_errors_total":                dto.MetricType_COUNTER,
		"resctrl_mon_pressure_cpu_waiting_seconds_total": dto.MetricType_COUNTER,
	}
	for name, typ := range types {
		if fams[name] == nil || fams[name].GetType() != typ {
			t.Errorf("%s: %v, want a %v", name, fams[name].GetType(), typ)
		}
	}
	const counterLabels = "class,domain,group,namespace,pod,pod_uid,resource"
	for _, c := range []struct {
		name, resource string
		domains        []string
	}{
		{"resctrl_mon_llc_occupancy_bytes", "L3", []string{"0", "1"}},
		{"resctrl_mon_mbm_total_bytes_total", "L3", []string{"0", "1"}},
		{"resctrl_mon_mbm_local_bytes_total", "L3", []string{"0", "1"}},
		{"resctrl_mon_core_energy_joules_total", "PERF_PKG", []string{"0"}},
		{"resctrl_mon_activity_farads_total", "PERF_PKG", []string{"0"}},
	} {
		for _, uid := range []string{uidBusy, uidIdle} {
			ms := find(fams[c.name], group(uid), "pod_uid="+uid, "namespace=shop", "pod=pod-"+uid[:4], "class=", "resource="+c.resource)
			if len(ms) != len(c.domains) {
				t.Errorf("%s of %s: %d series, want one per domain %v", c.name, uid, len(ms), c.domains)
			}
			for _, d := range c.domains {
				if len(find(fams[c.name], group(uid), "domain="+d)) != 1 {
					t.Errorf("%s of %s: no domain %s", c.name, uid, d)
				}
			}
			for _, m := range ms {
				if got := labelNames(m); got != counterLabels {
					t.Errorf("%s labels %s, want %s", c.name, got, counterLabels)
				}
			}
		}
	}
	one(t, fams, "resctrl_mon_pod_info", group(uidBusy), "pod_uid="+uidBusy, "state=active")
	if n := one(t, fams, "resctrl_mon_groups", "state=active"); n != 2 {
		t.Errorf("active groups %v, want 2", n)
	}
	if used, total := one(t, fams, "resctrl_mon_rmids_used"), one(t, fams, "resctrl_mon_num_rmids"); used != 3 || total != 64 {
		t.Errorf("rmids %v of %v, want 3 (root and two pods) of 64", used, total)
	}
	if n := one(t, fams, "resctrl_mon_snapshots", "kind=begin"); n != 2 {
		t.Errorf("begin snapshots %v, want 2", n)
	}
	// The manager counts as a front end no one named; each pod was made once.
	if n := one(t, fams, "resctrl_mon_outcomes_total", "source=other", "action=created"); n != 2 {
		t.Errorf("created outcomes %v, want 2", n)
	}
	if n := one(t, fams, "resctrl_mon_outcomes_total", "source=hook", "action=created"); n != 0 {
		t.Errorf("hook's created outcomes %v, want 0", n)
	}
	if n := one(t, fams, "resctrl_mon_snapshots_written_total", "kind=begin"); n != 2 {
		t.Errorf("begin snapshots written %v, want 2", n)
	}
	if one(t, fams, "resctrl_mon_pressure_available") != 1 {
		t.Errorf("pressure not available on a host with /proc/pressure")
	}
	for _, uid := range []string{uidBusy, uidIdle} {
		if ms := find(fams["resctrl_mon_pressure_cpu_waiting_seconds_total"], "pod_uid="+uid); len(ms) != 1 {
			t.Errorf("cpu pressure of %s: %d series, want its one container", uid, len(ms))
		}
	}

	// The busy pod's counters rise faster than the idle one's, and none goes down.
	before := fams
	after := e.waitFor(t, "bandwidth to grow", func(f map[string]*dto.MetricFamily) bool {
		return sum(find(f["resctrl_mon_mbm_total_bytes_total"], group(uidBusy))) > 2*sum(find(before["resctrl_mon_mbm_total_bytes_total"], group(uidBusy)))
	})
	for _, name := range []string{"resctrl_mon_mbm_total_bytes_total", "resctrl_mon_mbm_local_bytes_total", "resctrl_mon_core_energy_joules_total", "resctrl_mon_activity_farads_total"} {
		busy := sum(find(after[name], group(uidBusy))) - sum(find(before[name], group(uidBusy)))
		idle := sum(find(after[name], group(uidIdle))) - sum(find(before[name], group(uidIdle)))
		if busy <= 0 || busy <= 10*idle {
			t.Errorf("%s grew %v for the busy pod, %v for the idle one", name, busy, idle)
		}
	}
	problems, err := testutil.GatherAndLint(e.reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// TestUnavailable: a counter that reads Unavailable or Error leaves its series out and counts
// a read error (Unassigned leaves it out too, but is no error); the scrape still succeeds
// and, once the counter is back, it has not gone down.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.place(t, uidBusy, "busy", proctest.Start(t, proctest.Spin))
	const total = "resctrl_mon_mbm_total_bytes_total"
	before := e.waitFor(t, "bandwidth", func(f map[string]*dto.MetricFamily) bool { return sum(find(f[total], group(uidBusy))) > 0 })
	errs0 := one(t, before, "resctrl_mon_mon_data_read_errors_total", "reason=Unavailable")
	for _, state := range []string{"Unavailable", "Error", "Unassigned"} {
		e.sim.SetCounterState("mbm_total_bytes", state, "mon_groups/"+uidBusy)
		f := e.gather(t)
		if ms := find(f[total], group(uidBusy)); len(ms) != 0 {
			t.Errorf("%s: %d series of an %s counter, want none (never a 0)", state, len(ms), state)
		}
		if n := len(find(f["resctrl_mon_mbm_local_bytes_total"], group(uidBusy))); n != 2 {
			t.Errorf("%s: the other counters' series: %d, want 2", state, n)
		}
		// Unassigned is the state of a counter in mbm_event mode, not a failed read.
		switch n := sum(find(f["resctrl_mon_mon_data_read_errors_total"], "reason="+state)); {
		case state == "Unassigned" && n != 0:
			t.Errorf("read errors %s: %v, want none", state, n)
		case state != "Unassigned" && n < 2:
			t.Errorf("read errors %s: %v, want one per domain", state, n)
		}
	}
	if n := one(t, e.gather(t), "resctrl_mon_mon_data_read_errors_total", "reason=Unavailable"); n != errs0+2 {
		t.Errorf("read errors Unavailable: %v, want %v (one scrape, two domains)", n, errs0+2)
	}
	e.sim.SetCounterState("mbm_total_bytes", "clear", "mon_groups/"+uidBusy)
	after := e.gather(t)
	if a, b := sum(find(after[total], group(uidBusy))), sum(find(before[total], group(uidBusy))); a < b {
		t.Errorf("after the fault the counter went from %v down to %v", b, a)
	}
}

// TestRecreatedGroup: the group is removed behind resctrl-mon's back and made again (same
// life: its counters restart near 0), then lost and re-made by a placement (a new life on a
// new RMID). The exported counters never go down, and each absorption is counted.
func TestRecreatedGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	pid := proctest.Start(t, proctest.Spin)
	e.place(t, uidBusy, "busy", pid)
	const total = "resctrl_mon_mbm_total_bytes_total"
	last := e.waitFor(t, "bandwidth", func(f map[string]*dto.MetricFamily) bool { return sum(find(f[total], group(uidBusy))) > 0 })
	check := func(step string) {
		t.Helper()
		f := e.gather(t)
		for _, m := range last[total].GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			now := find(f[total], labels...)
			if len(now) == 1 && value(now[0]) < value(m) {
				t.Errorf("%s: %v went down from %v to %v", step, labels, value(m), value(now[0]))
			}
		}
		last = f
	}
	dir := filepath.Join(e.sim.Dir, "mon_groups", uidBusy)
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tasks"), []byte(itoa(pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	check("re-made behind our back")
	if n := one(t, last, "resctrl_mon_mon_data_resets_total", "cause=decrease"); n < 1 {
		t.Errorf("resets (decrease) %v after the group restarted from 0", n)
	}
	e.sim.Reset()
	e.place(t, uidBusy, "busy2", proctest.Start(t, proctest.Spin))
	check("re-made on a new life")
	if n := one(t, last, "resctrl_mon_mon_data_resets_total", "cause=new_life"); n < 1 {
		t.Errorf("resets (new_life) %v after a new life", n)
	}
	last = e.waitFor(t, "the new life's bandwidth to be counted", func(f map[string]*dto.MetricFamily) bool {
		return sum(find(f[total], group(uidBusy))) > sum(find(last[total], group(uidBusy)))
	})
	check("growing again")
}

// TestNoPSI: a host whose kernel keeps no pressure says so, and the rest is exported.
func TestNoPSI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &cgroup.Host{Proc: t.TempDir()})
	e.place(t, uidIdle, "idle", proctest.Start(t, proctest.Sleep))
	f := e.gather(t)
	if one(t, f, "resctrl_mon_pressure_available") != 0 {
		t.Errorf("pressure said available with no /proc/pressure")
	}
	if f["resctrl_mon_pressure_cpu_waiting_seconds_total"] != nil || len(find(f["resctrl_mon_llc_occupancy_bytes"], group(uidIdle))) != 2 {
		t.Errorf("want no pressure and the counters: %v", f)
	}
}

var _ = exporter.Prefix
