package top

import (
	"math"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/psi"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

var (
	t0   = time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC)
	life = t0.Add(-time.Hour)
)

// pod is a sample of one pod whose counters are given as "counter@domain" → value;
// a negative value is a counter that gave no number (Unavailable).
func pod(path string, created time.Time, counters map[string]float64, pressure map[psi.Resource]uint64) PodSample {
	p := inventory.Pod{Path: path, PodUID: path, Created: created, State: inventory.Active}
	for k, v := range counters {
		var name, dom string
		for i := range k {
			if k[i] == '@' {
				name, dom = k[:i], k[i+1:]
			}
		}
		if v < 0 {
			p.Missing = append(p.Missing, resctrlfs.Missing{Domain: dom, Name: name, Reason: "Unavailable"})
			continue
		}
		p.Readings = append(p.Readings, resctrlfs.Reading{Domain: dom, Name: name, Value: v})
	}
	ps := PodSample{Pod: p}
	if pressure != nil {
		ps.Pressure = map[psi.Resource]map[string]uint64{}
		for r, v := range pressure {
			ps.Pressure[r] = map[string]uint64{"/pod": v}
		}
	}
	return ps
}

func sample(at time.Time, pods ...PodSample) Sample { return Sample{At: at, Pods: pods} }

// unassignedIn adds counter@dom as the kernel's "Unassigned" reading (Linux ≥ 6.18 mbm_event).
func unassignedIn(p PodSample, counter, dom string) PodSample {
	p.Pod.Missing = append(p.Pod.Missing, resctrlfs.Missing{Domain: dom, Name: counter, Reason: "Unassigned"})
	return p
}

func TestNewFrameCells(t *testing.T) {
	t.Parallel()
	const l0, l1, p0 = "mon_L3_00", "mon_L3_01", "mon_PERF_PKG_00"
	for _, tc := range []struct {
		name       string
		prev, cur  PodSample
		noPrev     bool
		bw, energy Cell
		llc, cpu   Cell
	}{{
		name: "rates summed over domains",
		prev: pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@" + l0: 1000, resctrlfs.MBMTotal + "@" + l1: 500, resctrlfs.CoreEnergy + "@" + p0: 10, resctrlfs.LLCOccupancy + "@" + l0: 7}, map[psi.Resource]uint64{psi.CPU: 1e6}),
		cur:  pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@" + l0: 3000, resctrlfs.MBMTotal + "@" + l1: 1500, resctrlfs.CoreEnergy + "@" + p0: 40, resctrlfs.LLCOccupancy + "@" + l0: 64, resctrlfs.LLCOccupancy + "@" + l1: 36}, map[psi.Resource]uint64{psi.CPU: 1.5e6}),
		// 2 s apart: (2000+1000)/2, (40-10)/2 W, 0.5 s of 2 s waiting.
		bw: value(1500), energy: value(15), llc: value(100), cpu: value(25),
	}, {
		name:   "a new pod has no rates yet, but its gauge",
		noPrev: true,
		cur:    pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@" + l0: 3000, resctrlfs.LLCOccupancy + "@" + l0: 64}, map[psi.Resource]uint64{psi.CPU: 5}),
		bw:     Cell{Kind: Skip}, energy: Cell{}, llc: value(64), cpu: Cell{Kind: Skip},
	}, {
		name: "a counter that went down in one domain: no rate, never negative",
		prev: pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@" + l0: 5000, resctrlfs.MBMTotal + "@" + l1: 10}, nil),
		cur:  pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@" + l0: 20, resctrlfs.MBMTotal + "@" + l1: 5000}, nil),
		bw:   Cell{Kind: Skip},
	}, {
		name: "a new life of the group: no rate even if the counters grew",
		prev: pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@" + l0: 10, resctrlfs.CoreEnergy + "@" + p0: 1}, nil),
		cur:  pod("g", life.Add(time.Minute), map[string]float64{resctrlfs.MBMTotal + "@" + l0: 5000, resctrlfs.CoreEnergy + "@" + p0: 2}, nil),
		bw:   Cell{Kind: Skip}, energy: Cell{Kind: Skip},
	}, {
		name: "unavailable in one domain now: blank, not a partial sum",
		prev: pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@" + l0: 10, resctrlfs.MBMTotal + "@" + l1: 10, resctrlfs.LLCOccupancy + "@" + l0: 1}, nil),
		cur:  pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@" + l0: 5000, resctrlfs.MBMTotal + "@" + l1: -1, resctrlfs.LLCOccupancy + "@" + l0: -1}, nil),
		bw:   Cell{}, llc: Cell{},
	}, {
		name: "unavailable at the previous sample: blank",
		prev: pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@" + l0: -1}, nil),
		cur:  pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@" + l0: 5000}, nil),
		bw:   Cell{},
	}, {
		name: "a domain that appeared: no rate this frame",
		prev: pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@" + l0: 10}, nil),
		cur:  pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@" + l0: 20, resctrlfs.MBMTotal + "@" + l1: 20}, nil),
		bw:   Cell{Kind: Skip},
	}, {
		name: "no AET, no PSI: blank energy and pressure",
		prev: pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@" + l0: 0}, nil),
		cur:  pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@" + l0: 0}, nil),
		bw:   value(0),
	}, {
		name: "a bandwidth counter the kernel gave no hardware counter: says so, unlike a missing one",
		prev: pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@" + l0: 10, resctrlfs.MBMTotal + "@" + l1: 10}, nil),
		cur:  unassignedIn(pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@" + l0: 5000}, nil), resctrlfs.MBMTotal, l1),
		bw:   Cell{Kind: Unassigned},
	}, {
		name: "pressure total that went down (cgroup re-made): no rate",
		prev: pod("g", life, nil, map[psi.Resource]uint64{psi.CPU: 9e6}),
		cur:  pod("g", life, nil, map[psi.Resource]uint64{psi.CPU: 1e3}),
		cpu:  Cell{Kind: Skip},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			prev := sample(t0)
			if !tc.noPrev {
				prev.Pods = []PodSample{tc.prev}
			}
			f := NewFrame(prev, sample(t0.Add(2*time.Second), tc.cur))
			if len(f.Rows) != 1 {
				t.Fatalf("%d rows, want 1", len(f.Rows))
			}
			r := f.Rows[0]
			for _, c := range []struct {
				col       string
				got, want Cell
			}{{"bw", r.BW, tc.bw}, {"energy", r.Energy, tc.energy}, {"llc", r.LLC, tc.llc}, {"cpu", r.CPU, tc.cpu}} {
				if c.got != c.want {
					t.Errorf("%s: %+v, want %+v", c.col, c.got, c.want)
				}
			}
		})
	}
}

// TestPressureLargestContainer: without a pod cgroup, the largest container's share stands
// for the pod's, over the cgroups read in both samples.
func TestPressureLargestContainer(t *testing.T) {
	t.Parallel()
	prev := map[psi.Resource]map[string]uint64{psi.IO: {"/a": 0, "/b": 0}}
	cur := map[psi.Resource]map[string]uint64{psi.IO: {"/a": 1e5, "/b": 4e5, "/new": 9e9}}
	if got := pressure(prev, cur, psi.IO, 1); got != value(40) {
		t.Errorf("io: %+v, want 40%%", got)
	}
	if got := pressure(prev, cur, psi.Memory, 1); got != (Cell{}) {
		t.Errorf("memory never read: %+v, want blank", got)
	}
}

func TestName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pod  inventory.Pod
		want string
	}{
		{inventory.Pod{Namespace: "shop", PodName: "cart", PodUID: "u", Path: "mon_groups/u"}, "shop/cart"},
		{inventory.Pod{PodUID: "u", Path: "mon_groups/u"}, "u"},
		{inventory.Pod{Path: "mon_groups/x"}, "mon_groups/x"},
	} {
		if got := name(tc.pod); got != tc.want {
			t.Errorf("name(%+v) = %q, want %q", tc.pod, got, tc.want)
		}
	}
}

// FuzzNewFrame: whatever two samples hold, a rate is a finite non-negative number or no
// number at all.
func FuzzNewFrame(f *testing.F) {
	f.Add(100.0, 50.0, 1.0, 2.5, uint64(10), uint64(20), int64(time.Second), false)
	f.Add(50.0, 100.0, 3.0, 1.0, uint64(20), uint64(10), int64(time.Second), false)
	f.Add(0.0, 0.0, 0.0, 0.0, uint64(0), uint64(0), int64(0), true)
	f.Add(0.0, 1e300, 0.0, 1e300, uint64(0), uint64(math.MaxUint64), int64(1), false)
	f.Add(1e300, 1e300, 1e300, 1e300, uint64(math.MaxUint64), uint64(0), int64(-time.Second), false)
	f.Fuzz(func(t *testing.T, bw0, bw1, e0, e1 float64, p0, p1 uint64, dt int64, newLife bool) {
		for _, v := range []float64{bw0, bw1, e0, e1} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || v > 1e300 {
				t.Skip("not a counter value resctrlfs.ParseCounter lets through")
			}
		}
		created := life
		if newLife {
			created = life.Add(time.Second)
		}
		prev := sample(t0, pod("g", life, map[string]float64{resctrlfs.MBMTotal + "@mon_L3_00": bw0, resctrlfs.CoreEnergy + "@mon_PERF_PKG_00": e0}, map[psi.Resource]uint64{psi.CPU: p0}))
		cur := sample(t0.Add(time.Duration(dt)), pod("g", created, map[string]float64{resctrlfs.MBMTotal + "@mon_L3_00": bw1, resctrlfs.CoreEnergy + "@mon_PERF_PKG_00": e1}, map[psi.Resource]uint64{psi.CPU: p1}))
		r := NewFrame(prev, cur).Rows[0]
		for _, c := range []Cell{r.BW, r.Energy, r.CPU} {
			if c.Kind == Value && (c.V < 0 || math.IsNaN(c.V) || math.IsInf(c.V, 0)) {
				t.Fatalf("rate %v from %v→%v, %v→%v, %d→%d over %s", c.V, bw0, bw1, e0, e1, p0, p1, time.Duration(dt))
			}
			if c.Kind == Value && (dt <= 0 || newLife && c != r.CPU) {
				t.Fatalf("a rate %v over %s (new life %v)", c.V, time.Duration(dt), newLife)
			}
		}
		if r.BW.Kind == Value && bw1 < bw0 || r.CPU.Kind == Value && p1 < p0 {
			t.Fatalf("a rate over a counter that went down: %+v", r)
		}
	})
}
