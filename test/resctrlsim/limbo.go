package resctrlsim

import (
	"errors"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The kernel's RMID limbo (fs/resctrl/monitor.c), on when Options.Limbo or LimboTime is set,
// as it is on a kernel whenever llc_occupancy is monitored:
//
//   - free_rmid (an rmdir, or every group at an unmount) puts the RMID in limbo
//     unconditionally (add_rmid_to_limbo reads no occupancy at that moment);
//   - the limbo worker (cqm_handle_limbo, every CQM_LIMBOCHECK_INTERVAL, 1000 ms; here
//     Options.LimboInterval) reads each RMID in limbo's llc_occupancy in every L3 domain and
//     frees it once every reading is below resctrl_rmid_realloc_threshold (__check_limbo:
//     rmid_dirty = val >= threshold; a read that fails leaves it dirty);
//   - alloc_rmid says EBUSY while the free list is empty and limbo is not, ENOSPC when both
//     are empty (resctrl_find_free_rmid), see idPool.alloc;
//   - the threshold is info/L3_MON/max_threshold_occupancy, in bytes, writable
//     (max_threshold_occupancy_write).
//
// A freed RMID keeps the occupancy its group had, which decays as an idle group's does
// (Rates.LLCDecay): no task runs with that RMID any more, so its lines only leave the cache.
// A test sets it instead through the counter command (`counter llc_occupancy <bytes>
// <group>`, Sim.SetOccupancy): the group's reads show that number, and so does the worker's
// read of its RMID once the group is removed, until the test clears it.

// limboID is an RMID in limbo.
type limboID struct {
	id int
	// from is the path of the group that held it: a test's llc_occupancy for that path
	// follows the RMID into limbo.
	from string
	// l3 is the group's counters when it was freed; their occupancy decays on.
	l3 []l3Counters
	// held is when LimboTime ends: dirty until then whatever its occupancy, as if a
	// neighbour's traffic kept its lines counted.
	held time.Time
}

// limbo says freed RMIDs go to limbo.
func (o Options) limbo() bool { return o.Limbo || o.LimboTime > 0 }

// defaultLimboInterval is CQM_LIMBOCHECK_INTERVAL.
const defaultLimboInterval = time.Second

// freeRMIDs frees the RMIDs of g and every group below it, as free_rmid does: to limbo when
// limbo is on, else straight to the free list.
func (m *model) freeRMIDs(g *group, now time.Time) {
	for _, c := range g.ctrls {
		m.freeRMIDs(c, now)
	}
	for _, c := range g.mons {
		m.freeRMIDs(c, now)
	}
	if g.kind == kindRoot {
		return
	}
	if !m.opts.limbo() {
		m.rmids.release(g.rmid)
		return
	}
	l := limboID{id: g.rmid, from: g.Path(), l3: append([]l3Counters(nil), g.counters.l3...)}
	if m.opts.LimboTime > 0 {
		l.held = now.Add(m.opts.LimboTime)
	}
	m.rmids.toLimbo(l)
}

// limboPass is one run of the limbo worker: it frees every RMID in limbo whose occupancy
// reads below the threshold in every L3 domain, and reports how many it freed.
func (m *model) limboPass() int {
	now := m.opts.now()
	n := m.rmids.pass(func(l limboID) bool {
		if now.Before(l.held) {
			return false
		}
		for d := range l.l3 {
			occ, ok := m.limboOccupancy(l, d, now)
			if !ok || occ >= m.threshold {
				return false
			}
		}
		return true
	})
	m.stats.LimboPasses++
	return n
}

// limboOccupancy is what the worker reads for an RMID in limbo in L3 domain d; ok is false
// for a read that fails (a test made the counter read a state, not a number).
func (m *model) limboOccupancy(l limboID, d int, now time.Time) (uint64, bool) {
	if v, ok := m.faults.counterValue("llc_occupancy", l.from); ok {
		n, err := strconv.ParseUint(v, 10, 64)
		return n, err == nil
	}
	c := l.l3[d] // a copy: decay always starts from the occupancy at the rmdir
	c.decay(now, m.opts.Rates)
	return uint64(c.occ) / occupancyScale * occupancyScale, true
}

// renderThreshold is max_threshold_occupancy_show.
func (m *model) renderThreshold() string { return strconv.FormatUint(m.threshold, 10) + "\n" }

// writeThreshold is max_threshold_occupancy_write: kstrtouint (base 0, one trailing newline),
// at most the cache's size (resctrl_rmid_realloc_limit), rounded down to the counter's
// granularity (resctrl_arch_round_mon_val).
func (m *model) writeThreshold(data []byte) syscall.Errno {
	s := strings.TrimSuffix(string(data), "\n")
	if strings.ContainsRune(s, '_') { // Go's base 0 takes underscores, kstrtouint does not
		return syscall.EINVAL
	}
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return syscall.ERANGE
		}
		return syscall.EINVAL
	}
	if v > m.opts.Rates.LLCSizeBytes {
		return syscall.EINVAL
	}
	m.threshold = v / occupancyScale * occupancyScale
	return 0
}

// limboWorkerPass is one run of the kernel's limbo worker (Sim.tick runs it every
// LimboInterval).
func (s *Sim) limboWorkerPass() {
	s.m.lock()
	s.m.limboPass()
	s.m.unlock()
}

// LimboPass runs one pass of the limbo worker now, beside its own ticker, and returns how
// many RMIDs it freed: a test that has let an RMID's lines go (cleared its occupancy) need not
// wait for the worker's next tick.
func (s *Sim) LimboPass() int {
	s.m.lock()
	defer s.m.unlock()
	return s.m.limboPass()
}

// SetOccupancy makes the llc_occupancy of the group at path read bytes, in every L3 domain,
// and the worker's read of its RMID once the group is removed, until ClearOccupancy.
func (s *Sim) SetOccupancy(path string, bytes uint64) {
	s.SetCounterState("llc_occupancy", strconv.FormatUint(bytes, 10), path)
}

// ClearOccupancy lets the group at path's llc_occupancy (or its RMID's, in limbo) be the
// model's again: the lines a test held are gone.
func (s *Sim) ClearOccupancy(path string) { s.SetCounterState("llc_occupancy", "clear", path) }
