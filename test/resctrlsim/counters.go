package resctrlsim

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The counters of one group, per monitoring domain. They are float64 so that small CPU
// increments are never rounded away; what the files show is rounded down.
type counters struct {
	l3  []l3Counters
	pkg []pkgCounters
}

type l3Counters struct {
	total, local float64 // cumulative bytes
	occ          float64 // bytes now in the cache: a gauge that decays when the group idles
	occAt        time.Time
	// cntr is the assignable counter each MBM event holds in this domain (-1: none), base
	// the count at its last reset (an assignment or a mode switch); see assign.go.
	cntr [numMBMEvents]int
	base [numMBMEvents]float64
}

type pkgCounters struct {
	energy, activity float64 // cumulative
	cpu              float64 // CPU seconds: the perf group's integer events follow it (aet.go)
}

func newCounters(o Options) counters {
	c := counters{l3: make([]l3Counters, o.l3MonDomains()), pkg: make([]pkgCounters, o.PerfPkgDomains)}
	for d := range c.l3 {
		c.l3[d].cntr = [numMBMEvents]int{-1, -1}
	}
	return c
}

// add charges d of CPU time that ran on cpu. A CPU belongs to L3 monitoring domain cpu mod
// domains (and likewise for packages): enough to make a task's domain stable and its counts
// land in one place. With SNC the L3 monitoring domains are the nodes (snc.go).
func (c *counters) add(cpu int, d time.Duration, now time.Time, r Rates) {
	s := d.Seconds()
	l := &c.l3[cpu%len(c.l3)]
	l.total += s * r.MBMTotalBytesPerCPUSecond
	l.local += s * r.MBMTotalBytesPerCPUSecond * r.MBMLocalFraction
	l.decay(now, r)
	l.occ = math.Min(l.occ+s*r.LLCBytesPerCPUSecond, float64(r.LLCSizeBytes))
	if len(c.pkg) > 0 {
		p := &c.pkg[cpu%len(c.pkg)]
		p.energy += s * r.JoulesPerCPUSecond
		p.activity += s * r.ActivityPerCPUSecond
		p.cpu += s
	}
}

// decay lets the occupancy drain exponentially since the last update, as lines of an idle
// group get evicted.
func (l *l3Counters) decay(now time.Time, r Rates) {
	if !l.occAt.IsZero() && now.After(l.occAt) {
		l.occ *= math.Exp(-float64(now.Sub(l.occAt)) / float64(r.LLCDecay))
	}
	l.occAt = now
}

// occupancy is what llc_occupancy shows of l now.
func (m *model) occupancy(l *l3Counters) uint64 {
	l.decay(m.opts.now(), m.opts.Rates)
	return uint64(l.occ) / occupancyScale * occupancyScale
}

// occupancyScale is the granularity of llc_occupancy: hardware counts cache lines in units
// of an upscaling factor, so real readings are multiples of it.
const occupancyScale = 64 << 10

// charge moves the CPU time a thread used since the last charge to its current group.
func (m *model) charge(tid int, t *task) {
	if t.exited {
		return
	}
	st, ok := m.host.Stat(tid)
	if !ok {
		return
	}
	if t.charged && st.CPUTime > t.cpu {
		m.groupOf(tid).counters.add(st.CPU, st.CPUTime-t.cpu, m.opts.now(), m.opts.Rates)
	}
	t.cpu, t.charged = st.CPUTime, true
}

// settleGroup charges the CPU time of every thread in g. The root group holds every thread
// nobody moved, so settling it walks /proc.
func (m *model) settleGroup(g *group) {
	if g.kind != kindRoot {
		for tid, t := range m.tasks {
			if t.g == g {
				m.charge(tid, t)
			}
		}
		return
	}
	threads, err := m.host.Threads()
	if err != nil {
		return
	}
	for _, th := range threads {
		t := m.tasks[th.Tid]
		if t == nil {
			t = m.track(th.Tid, th.Tgid, m.root, false)
		}
		if m.groupOf(th.Tid) == m.root {
			m.charge(th.Tid, t)
		}
	}
	m.prune(threads)
}

// settleAll charges every thread's CPU time to its group; the ticker calls it so threads that
// exit between two reads are still counted.
func (m *model) settleAll() {
	m.lock()
	defer m.unlock()
	for tid, t := range m.tasks {
		if t.g != m.root {
			m.charge(tid, t)
		}
	}
	m.settleGroup(m.root)
}

// readCounter renders one mon_data file: domain is "L3" or "PERF_PKG", idx the domain id.
func (m *model) readCounter(g *group, domain string, idx int, name string) (string, syscall.Errno) {
	if g.dead {
		return "", syscall.ENOENT
	}
	if errno := m.faults.take(OpCounterRead); errno != 0 {
		return "", m.injected(OpCounterRead, errno)
	}
	if v, ok := m.faults.counterValue(name, g.Path()); ok {
		return v + "\n", 0
	}
	m.settleGroup(g)
	if domain == "L3" {
		l := &g.counters.l3[idx]
		switch name {
		case "llc_occupancy":
			return strconv.FormatUint(m.occupancy(l), 10) + "\n", 0
		case "mbm_total_bytes":
			return m.readMBM(g, idx, evTotal), 0
		case "mbm_local_bytes":
			return m.readMBM(g, idx, evLocal), 0
		}
	}
	p := g.counters.pkg[idx]
	switch name {
	case "core_energy":
		return fmt.Sprintf("%.6f\n", p.energy), 0
	case "activity":
		return fmt.Sprintf("%.6f\n", p.activity), 0
	}
	if rate, ok := perfEventRates[name]; ok {
		return strconv.FormatUint(uint64(p.cpu*rate), 10) + "\n", 0
	}
	return "", syscall.ENOENT
}

// l3Features are the counters of an L3 domain, in the order of info/L3_MON/mon_features
// (a PERF_PKG domain's are its enabled AET groups': aet.go).
func l3Features() []string { return []string{"llc_occupancy", "mbm_total_bytes", "mbm_local_bytes"} }

// onlineCPUs reads /sys/devices/system/cpu/online; one CPU if it cannot.
func onlineCPUs() []int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return []int{0}
	}
	cpus, err := parseCPUList(strings.TrimSpace(string(b)))
	if err != nil || len(cpus) == 0 {
		return []int{0}
	}
	return cpus
}
