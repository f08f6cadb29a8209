package lifecycle

import (
	"errors"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/mbmpolicy"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// assignCounters applies the counter policy (mbmAssignment: policy) in mbm_event mode: it
// reads which of our groups hold counters and how busy each is, and writes what
// mbmpolicy.Plan says. It is housekeeping, run by Sweep only: a container never waits on it
// (Place leaves assignment to what the kernel does at mkdir). Nothing here fails the sweep:
// a write the kernel refuses, or the mode switched under us, is logged, and the next sweep
// reads everything again and retries.
func (m *Manager) assignCounters() {
	if m.cfg.MBMAssignment != config.MBMAssignPolicy {
		return
	}
	a, err := m.rs.Assignment()
	if err != nil {
		m.log.Warn("counter assignment: reading the mode; retried at the next sweep", "err", err)
		return
	}
	if !a.Counting() {
		return
	}
	in, err := m.assignmentInput(a)
	if err != nil {
		m.log.Warn("counter assignment: reading the groups; retried at the next sweep", "err", err)
		return
	}
	m.applyAssignments(mbmpolicy.Plan(in))
}

// assignmentInput reads what the policy decides from: our groups (not those of others, whose
// counters are theirs), their assignments and LLC occupancy.
func (m *Manager) assignmentInput(a resctrlfs.Assignment) (mbmpolicy.Input, error) {
	recs, err := m.store.List()
	in := mbmpolicy.Input{Free: a.Available, Now: m.now(), Hold: time.Duration(m.cfg.MBMAssignmentHold)}
	for _, r := range recs {
		if r.RemoveFailed != "" || !m.rs.Exists(addrOf(r)) {
			continue
		}
		ga, gerr := m.rs.GroupAssignment(addrOf(r))
		if gerr != nil {
			// Left out, its counters are neither counted nor moved this time.
			m.log.Warn("counter assignment: reading a group's assignments", "group", r.Path, "err", gerr)
			continue
		}
		for _, e := range ga.Events {
			if !slices.Contains(in.Events, e) {
				in.Events = append(in.Events, e)
			}
		}
		g := mbmpolicy.Group{Path: r.Path, Wanted: r.MBMWanted, Live: len(r.Containers) > 0,
			Assigned: ga.Assigned, Occupancy: m.occupancy(addrOf(r)), Since: map[string]time.Time{}}
		for d := range ga.Assigned {
			g.Since[d] = r.Created
			if t, ok := r.MBMSince[d]; ok {
				g.Since[d] = t
			}
		}
		in.Groups = append(in.Groups, g)
	}
	return in, err
}

// occupancy reads the group's llc_occupancy by L3 domain id; a domain that gave no number
// counts as idle there.
func (m *Manager) occupancy(g resctrlfs.Addr) map[string]uint64 {
	out := map[string]uint64{}
	readings, _, _ := m.rs.Counters(g)
	for _, r := range readings {
		if r.Name != resctrlfs.LLCOccupancy {
			continue
		}
		if res, id, err := resctrlfs.DomainID(r.Domain); err == nil && res == "L3" {
			out[id] = uint64(r.Value)
		}
	}
	return out
}

// applyAssignments writes a plan and records when each group got its counters. A refused
// write is logged and the rest go on (an assignment may still fit); a mode that is no longer
// mbm_event stops the round.
func (m *Manager) applyAssignments(plan []mbmpolicy.Write) {
	since := map[string]map[string]*time.Time{} // group path → domain → assigned at (nil: unassigned)
	now := m.now().UTC()
	for _, w := range plan {
		g, err := resctrlfs.ParseAddr(w.Path) // a record's path (assignmentInput)
		if err == nil {
			err = m.rs.WriteAssignment(g, w.Line())
		}
		if err != nil {
			if a, rerr := m.rs.Assignment(); rerr == nil && !a.Counting() {
				m.log.Warn("counter assignment: the mode is no longer mbm_event (switched under us); nothing more written",
					"mode", a.Mode, "err", err)
				break
			}
			if errors.Is(err, syscall.ENOENT) {
				continue // the group went meanwhile
			}
			m.log.Warn("counter assignment: the kernel refused a write; retried at the next sweep", "group", w.Path, "err", err)
			continue
		}
		m.log.Info("counter assignment", "group", w.Path, "write", w.Line())
		if since[w.Path] == nil {
			since[w.Path] = map[string]*time.Time{}
		}
		if w.Assign {
			since[w.Path][w.Domain] = &now
		} else if _, set := since[w.Path][w.Domain]; !set {
			since[w.Path][w.Domain] = nil
		}
	}
	for path, domains := range since {
		m.recordSince(path, domains)
	}
}

// recordSince keeps when the group's counters were assigned, for the hold time.
func (m *Manager) recordSince(path string, domains map[string]*time.Time) {
	name := filepath.Base(path)
	err := m.store.Update(name, sweepLockWait, func(tx *registry.Tx) error {
		if !tx.Owned || tx.Rec.Path != path {
			return nil
		}
		for d, t := range domains {
			if t == nil {
				delete(tx.Rec.MBMSince, d)
				continue
			}
			if tx.Rec.MBMSince == nil {
				tx.Rec.MBMSince = map[string]time.Time{}
			}
			tx.Rec.MBMSince[d] = *t
		}
		return tx.Save()
	})
	if err != nil {
		// The hold then counts from the group's creation: a counter may move sooner.
		m.log.Warn("counter assignment: recording when a group got its counters", "group", path, "err", err)
	}
}
