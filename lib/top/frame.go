package top

import (
	"math"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/psi"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// CellKind says whether a cell has a number (the package doc).
type CellKind int

const (
	// None: no counter to show (the host has none, or it gave no number): blank.
	None CellKind = iota
	// Skip: the counter is there but there is no rate this frame: "-".
	Skip
	// Value: V holds the number.
	Value
	// Unassigned: a bandwidth counter the kernel gave no hardware counter to (Linux ≥ 6.18
	// mbm_event mode): the pod's bandwidth is not counted, which the view says, rather than
	// leaving it blank like a host without the counter.
	Unassigned
)

// rank orders kinds for sorting: a number, then "-", then "unassigned", then blank.
func (k CellKind) rank() int {
	switch k {
	case Value:
		return 3
	case Skip:
		return 2
	case Unassigned:
		return 1
	}
	return 0
}

// Cell is one column of a row.
type Cell struct {
	Kind CellKind
	V    float64
}

func value(v float64) Cell { return Cell{Kind: Value, V: v} }

// Row is one pod in a frame.
type Row struct {
	Name  string // namespace/name, else the pod's UID, else the group
	UID   string
	Group string
	State inventory.State
	// BW is bytes/s of mbm_total_bytes, LLC bytes of llc_occupancy, Energy watts of
	// core_energy, all summed over the domains; CPU, Memory and IO are the percent of the
	// interval some task waited.
	BW, LLC, Energy, CPU, Memory, IO Cell
}

// Frame is what one refresh shows.
type Frame struct {
	At       time.Time
	Interval time.Duration // between the two samples
	Rows     []Row
	Err      error // what the newer sample could not read
}

// NewFrame computes the rows from two samples, prev taken before cur.
func NewFrame(prev, cur Sample) Frame {
	f := Frame{At: cur.At, Interval: cur.At.Sub(prev.At), Err: cur.Err, Rows: make([]Row, 0, len(cur.Pods))}
	dt := f.Interval.Seconds()
	before := make(map[string]*PodSample, len(prev.Pods))
	for i := range prev.Pods {
		before[prev.Pods[i].Pod.Path] = &prev.Pods[i]
	}
	for _, p := range cur.Pods {
		old := before[p.Pod.Path]
		r := Row{Name: name(p.Pod), UID: p.Pod.PodUID, Group: p.Pod.Path, State: p.Pod.State}
		r.LLC = gauge(p.Pod, resctrlfs.LLCOccupancy)
		// A group in a new life (re-made on a new RMID) has counts that are not the
		// previous ones' continuation: no rate until the next frame.
		var oldPod *inventory.Pod
		if old != nil && old.Pod.Created.Equal(p.Pod.Created) {
			oldPod = &old.Pod
		}
		r.BW = rate(oldPod, p.Pod, resctrlfs.MBMTotal, dt)
		if unassigned(p.Pod, resctrlfs.MBMTotal) {
			r.BW = Cell{Kind: Unassigned}
		}
		r.Energy = rate(oldPod, p.Pod, resctrlfs.CoreEnergy, dt)
		var oldP map[psi.Resource]map[string]uint64
		if old != nil {
			oldP = old.Pressure
		}
		r.CPU = pressure(oldP, p.Pressure, psi.CPU, dt)
		r.Memory = pressure(oldP, p.Pressure, psi.Memory, dt)
		r.IO = pressure(oldP, p.Pressure, psi.IO, dt)
		f.Rows = append(f.Rows, r)
	}
	return f
}

func name(p inventory.Pod) string {
	switch {
	case p.Namespace != "" || p.PodName != "":
		return p.Namespace + "/" + p.PodName
	case p.PodUID != "":
		return p.PodUID
	}
	return p.Path
}

// domains returns counter's value per domain, and whether every domain gave a number.
func domains(p inventory.Pod, counter string) (map[string]float64, bool) {
	for _, m := range p.Missing {
		if m.Name == counter {
			return nil, false
		}
	}
	out := map[string]float64{}
	for _, r := range p.Readings {
		if r.Name == counter {
			out[r.Domain] = r.Value
		}
	}
	return out, len(out) > 0
}

// unassigned reports whether the kernel says counter has no hardware counter in some domain
// now: the pod's traffic there is not counted at all.
func unassigned(p inventory.Pod, counter string) bool {
	for _, m := range p.Missing {
		if m.Name == counter && m.Reason == "Unassigned" {
			return true
		}
	}
	return false
}

// gauge sums a gauge over its domains.
func gauge(p inventory.Pod, counter string) Cell {
	now, ok := domains(p, counter)
	if !ok {
		return Cell{}
	}
	s := 0.0
	for _, v := range now {
		s += v
	}
	return value(s)
}

// rate is a cumulative counter's increase per second, summed over its domains. A domain that
// gave no number blanks the cell (a sum over some domains would pass for the whole); one
// that went down, or was not there before, makes it "-".
func rate(prev *inventory.Pod, cur inventory.Pod, counter string, dt float64) Cell {
	now, ok := domains(cur, counter)
	if !ok {
		return Cell{}
	}
	if prev == nil || dt <= 0 {
		return Cell{Kind: Skip}
	}
	then, ok := domains(*prev, counter)
	if !ok {
		return Cell{}
	}
	d := 0.0
	for dom, v := range now {
		t, seen := then[dom]
		if !seen || v < t {
			return Cell{Kind: Skip}
		}
		d += v - t
	}
	return finite(d / dt)
}

// finite keeps an overflow (a huge jump over a tiny interval: a counter the kernel reset to
// garbage) out of the table and out of the sort.
func finite(v float64) Cell {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return Cell{Kind: Skip}
	}
	return value(v)
}

// pressure is the percent of the interval some task waited for r: the largest over the
// cgroups read in both samples. A total that went down (a cgroup re-made under the same
// path) makes it "-".
func pressure(prev, cur map[psi.Resource]map[string]uint64, r psi.Resource, dt float64) Cell {
	if len(cur[r]) == 0 || (prev != nil && len(prev[r]) == 0) {
		return Cell{}
	}
	if prev == nil || dt <= 0 {
		return Cell{Kind: Skip}
	}
	c := Cell{Kind: Skip}
	for cg, now := range cur[r] {
		then, ok := prev[r][cg]
		if !ok || now < then {
			continue
		}
		pct := finite(float64(now-then) / (dt * 1e6) * 100)
		if pct.Kind == Value && (c.Kind != Value || pct.V > c.V) {
			c = pct
		}
	}
	return c
}
