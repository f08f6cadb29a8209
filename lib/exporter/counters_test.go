package exporter

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// fake is a Source whose pods the test sets before each scrape.
type fake struct {
	pods   []inventory.Pod
	counts map[string]uint64
	assign resctrlfs.Assignment
}

func (f *fake) Assignment() (resctrlfs.Assignment, error) { return f.assign, nil }

func (f *fake) Counts() (map[string]uint64, error) { return f.counts, nil }

func (f *fake) Pods(inventory.Options) ([]inventory.Pod, error) { return f.pods, nil }
func (f *fake) RMIDs() (inventory.RMIDs, error)                 { return inventory.RMIDs{Used: 2, Total: 8}, nil }
func pod(life int, total float64) inventory.Pod {
	return inventory.Pod{Path: "mon_groups/p", PodUID: "p", State: inventory.Active, Created: time.Unix(int64(life), 0),
		Readings: []resctrlfs.Reading{{Domain: "mon_L3_00", Name: "mbm_total_bytes", Value: total, Cumulative: true, Unit: "By"}}}
}

func TestAdvance(t *testing.T) {
	t.Parallel()
	type step struct {
		life      int
		raw, want float64
	}
	for _, tc := range []struct {
		name              string
		steps             []step
		decrease, newLife float64
	}{
		{"first reading is zero, then increases", []step{{1, 500, 0}, {1, 600, 100}, {1, 600, 100}, {1, 1000, 500}}, 0, 0},
		{"a lower reading is a new baseline", []step{{1, 500, 0}, {1, 900, 400}, {1, 10, 400}, {1, 30, 420}}, 1, 0},
		{"a wrap to near zero", []step{{1, 0, 0}, {1, 1 << 40, 1 << 40}, {1, 5, 1 << 40}, {1, 105, 1<<40 + 100}}, 1, 0},
		{"a new life with residual counts higher than before", []step{{1, 100, 0}, {1, 200, 100}, {2, 1e12, 100}, {2, 1e12 + 50, 150}}, 0, 1},
		{"a new life lower than before", []step{{1, 100, 0}, {1, 200, 100}, {2, 3, 100}, {2, 4, 101}}, 0, 1},
		{"a glitch down and back up", []step{{1, 100, 0}, {1, 200, 100}, {1, 199, 100}, {1, 210, 111}}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := &fake{}
			c, err := New(src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tc.steps {
				src.pods = []inventory.Pod{pod(s.life, s.raw)}
				got := gatherValue(t, c, "resctrl_mon_mbm_total_bytes_total")
				if got != s.want {
					t.Errorf("step %d (life %d, raw %v): exported %v, want %v", i, s.life, s.raw, got, s.want)
				}
			}
			if got := testutil.ToFloat64(c.resets.WithLabelValues(CauseDecrease)); got != tc.decrease {
				t.Errorf("decrease resets %v, want %v", got, tc.decrease)
			}
			if got := testutil.ToFloat64(c.resets.WithLabelValues(CauseNewLife)); got != tc.newLife {
				t.Errorf("new life resets %v, want %v", got, tc.newLife)
			}
		})
	}
}

// gatherValue scrapes c and returns the one series of name.
func gatherValue(t *testing.T, c *Collector, name string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no single series %s", name)
	return 0
}

// TestPrune: the collector remembers a group only while it is in the registry.
func TestPrune(t *testing.T) {
	t.Parallel()
	src := &fake{pods: []inventory.Pod{pod(1, 10)}}
	c, err := New(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = testutil.CollectAndCount(c)
	if len(c.tracks) != 1 {
		t.Fatalf("tracks %d, want 1", len(c.tracks))
	}
	src.pods = nil
	_ = testutil.CollectAndCount(c)
	if len(c.tracks) != 0 {
		t.Errorf("tracks %d after the group went, want 0", len(c.tracks))
	}
}

// Failures come from the state dir's counts, by reason; a reason this version does not
// know (a newer writer) is "other", and every reason has a series from the start.
func TestFailuresFromCounts(t *testing.T) {
	t.Parallel()
	src := &fake{counts: map[string]uint64{"failure.create": 1, "failure.identity": 2, "failure.bogus": 3, "hook.created": 7}}
	c, err := New(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() == "resctrl_mon_failures_total" {
			for _, m := range mf.GetMetric() {
				got[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	want := map[string]float64{"create": 1, "identity": 2, "other": 3, "assign": 0, "remove": 0, "snapshot": 0}
	for r, n := range want {
		if v, ok := got[r]; !ok || v != n {
			t.Errorf("failures_total{reason=%q} = %v (present %v), want %v", r, v, ok, n)
		}
	}
}

// broken is a Source whose registry cannot be read at all.
type broken struct{ fake }

func (broken) Pods(inventory.Options) ([]inventory.Pod, error) {
	return nil, errors.New("state dir: no such file or directory")
}

// TestUnreadableRegistry: no groups-by-state zeros (they would look like a node without
// pods), inventory_up 0, the error counted; then the registry is back.
func TestUnreadableRegistry(t *testing.T) {
	t.Parallel()
	c, err := New(&broken{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	if n, err := testutil.GatherAndCount(reg, "resctrl_mon_groups"); err != nil || n != 0 {
		t.Errorf("groups: %d series (%v), want none", n, err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader("# HELP resctrl_mon_inventory_up 1 if the registry of groups could be read in this scrape (groups and pods are exported), else 0.\n# TYPE resctrl_mon_inventory_up gauge\nresctrl_mon_inventory_up 0\n"), "resctrl_mon_inventory_up"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(c.sourceErrors.WithLabelValues(SourceRegistry)); got != 2 {
		t.Errorf("registry errors %v, want 2 (two scrapes)", got)
	}
}

// TestUnreadableRegistryKeepsReadings: a registry that cannot be read at all forgets
// nothing (its groups come back without a reset).
func TestUnreadableRegistryKeepsReadings(t *testing.T) {
	t.Parallel()
	src := &switchable{fake: fake{pods: []inventory.Pod{pod(1, 10)}}}
	c, err := New(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = testutil.CollectAndCount(c)
	src.pods = []inventory.Pod{pod(1, 30)}
	_ = testutil.CollectAndCount(c)
	src.broken = true
	_ = testutil.CollectAndCount(c)
	if len(c.tracks) != 1 {
		t.Fatalf("tracks %d after an unreadable registry, want 1", len(c.tracks))
	}
	src.broken, src.pods = false, []inventory.Pod{pod(1, 35)}
	if got := gatherValue(t, c, "resctrl_mon_mbm_total_bytes_total"); got != 25 {
		t.Errorf("after the registry came back: %v, want 25", got)
	}
}

type switchable struct {
	fake
	broken bool
}

func (s *switchable) Pods(o inventory.Options) ([]inventory.Pod, error) {
	if s.broken {
		return nil, errors.New("state dir: permission denied")
	}
	return s.fake.Pods(o)
}

// TestUnassigned: in mbm_event mode a counter that reads Unassigned has no series and is no
// read error, the pod's mbm_assigned says 0; when a counter is assigned again its whole
// reading is new traffic (the kernel's counter starts from zero), counted as an assignment.
func TestUnassigned(t *testing.T) {
	t.Parallel()
	const none = -1 // the counter reads Unassigned
	for _, tc := range []struct {
		name  string
		steps []float64 // raw readings
		want  []float64 // exported (none: no series)
	}{
		{"assigned, taken away, given back", []float64{500, 600, none, 40, 90}, []float64{0, 100, none, 140, 190}},
		{"unassigned from the start", []float64{none, none, 30, 45}, []float64{none, none, 30, 45}},
		{"taken away twice", []float64{10, none, 5, none, 7}, []float64{0, none, 5, none, 12}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := &fake{assign: resctrlfs.Assignment{Mode: resctrlfs.AssignModeEvent,
				Counters: map[string]int{"0": 32}, Available: map[string]int{"0": 7}}}
			c, err := New(src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(c)
			assignments := 0.0
			for i, raw := range tc.steps {
				p := pod(1, raw)
				if raw == none {
					p.Readings = nil
					p.Missing = []resctrlfs.Missing{{Domain: "mon_L3_00", Name: "mbm_total_bytes", Reason: "Unassigned"}}
				} else if i > 0 && tc.steps[i-1] == none {
					assignments++
				}
				src.pods = []inventory.Pod{p}
				mfs, err := reg.Gather()
				if err != nil {
					t.Fatal(err)
				}
				fams := map[string][]float64{}
				for _, mf := range mfs {
					for _, m := range mf.GetMetric() {
						fams[mf.GetName()] = append(fams[mf.GetName()], m.GetCounter().GetValue()+m.GetGauge().GetValue())
					}
				}
				got := fams["resctrl_mon_mbm_total_bytes_total"]
				switch {
				case tc.want[i] == none && len(got) != 0:
					t.Errorf("step %d: Unassigned exported as %v", i, got)
				case tc.want[i] != none && (len(got) != 1 || got[0] != tc.want[i]):
					t.Errorf("step %d (raw %v): exported %v, want %v", i, raw, got, tc.want[i])
				}
				assigned := 1.0
				if raw == none {
					assigned = 0
				}
				if a := fams["resctrl_mon_mbm_assigned"]; len(a) != 1 || a[0] != assigned {
					t.Errorf("step %d: mbm_assigned %v, want %v", i, a, assigned)
				}
				if n, a := fams["resctrl_mon_mbm_counters"], fams["resctrl_mon_mbm_counters_available"]; len(n) != 1 || n[0] != 32 || len(a) != 1 || a[0] != 7 {
					t.Errorf("step %d: node counters %v available %v", i, n, a)
				}
			}
			if got := testutil.ToFloat64(c.readErrors.WithLabelValues("Unassigned")); got != 0 {
				t.Errorf("Unassigned counted as %v read errors", got)
			}
			if got := testutil.ToFloat64(c.resets.WithLabelValues(CauseAssignment)); got != assignments {
				t.Errorf("assignment resets %v, want %v", got, assignments)
			}
			if got := testutil.ToFloat64(c.resets.WithLabelValues(CauseDecrease)); got != 0 {
				t.Errorf("decrease resets %v, want none", got)
			}
		})
	}
}

// TestNoAssignmentMetricsOutsideMbmEvent: on a node not in mbm_event mode there is no
// mbm_assigned series and no node counter gauges.
func TestNoAssignmentMetricsOutsideMbmEvent(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"", "default"} {
		src := &fake{pods: []inventory.Pod{pod(1, 10)}, assign: resctrlfs.Assignment{Mode: mode}}
		c, err := New(src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(c)
		for _, name := range []string{"resctrl_mon_mbm_assigned", "resctrl_mon_mbm_counters", "resctrl_mon_mbm_counters_available"} {
			if n, err := testutil.GatherAndCount(reg, name); err != nil || n != 0 {
				t.Errorf("mode %q: %s has %d series (%v)", mode, name, n, err)
			}
		}
	}
}
