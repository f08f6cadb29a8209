package lifecycle

import (
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// maxReclaimTries bounds the idle groups one placement tries to end.
const maxReclaimTries = 8

// limboWait bounds the wait of a placement for the RMID of the group it reclaimed: the
// kernel's limbo worker frees a clean RMID on its next pass, at most CQM_LIMBOCHECK_INTERVAL
// (1s) after the rmdir; the rest is margin for a busy node. limboRetry is how often mkdir is
// tried meanwhile (each a failed mkdir, nothing else).
const (
	limboWait  = 1500 * time.Millisecond
	limboRetry = 50 * time.Millisecond
)

// limboReader is resctrl that says whether freed RMIDs go to the kernel's limbo and under
// which llc_occupancy they leave it (lib/resctrlfs/kernel's Groups.LimboThreshold; the fake's Limbo). One
// that cannot say (the hook's join, which never reclaims) has none.
type limboReader interface {
	LimboThreshold() (threshold uint64, on bool, err error)
}

// limbo is what reclaim knows of the kernel's RMID limbo.
type limbo struct {
	on        bool
	threshold uint64
}

// readLimbo reads it; an error says reclaim cannot tell whether an RMID it frees is usable.
func (m *Manager) readLimbo() (limbo, error) {
	lr, ok := m.rs.(limboReader)
	if !ok {
		return limbo{}, nil
	}
	th, on, err := lr.LimboThreshold()
	return limbo{on: on, threshold: th}, err
}

// ensureReclaiming makes the group, as Ensure does; when the kernel has no RMID at all, it
// first ends the group idle longest (rmidReclaim: idle) and tries once more. self is the
// group being made (never a candidate: its lock is held). reclaimed says which group made
// room, as a step for the caller to report and count.
//
// With the kernel's limbo (see the package comment of resctrlfs, "RMIDs and limbo"), only a
// group whose occupancy is below the threshold already is ended (see reclaim), and the mkdir
// then waits for the worker's next pass, a bounded time (limboWait), so the new pod gets the
// RMID in this call, as without limbo. An idle group whose lines are still in
// the cache is never ended: its RMID would stay dirty, the new pod pending anyway, and the
// idle pod's life ended for nothing. The pod is pending; the sweep completes it once the
// lines have gone (CompletePending reclaims then).
//
// Only ENOSPC is reclaimed from. EBUSY is the kernel's limbo (free RMIDs, all still dirty),
// and ending another group would only add its RMID to them; the pod is
// pending, as before, and the sweep completes it once an RMID is clean.
//
// awaitLimbo (housekeeping: CompletePending, never a placement) waits for the worker's pass
// on EBUSY too, bounded as above: an RMID a pod's end or a reclaim freed a moment ago is the
// pending pod's once the pass finds it clean, and nothing else would retry the pod then.
func (m *Manager) ensureReclaiming(g resctrlfs.Addr, awaitLimbo bool) (reclaimed *Step, err error) {
	err = m.rs.Ensure(g)
	if awaitLimbo && errors.Is(err, syscall.EBUSY) {
		err = m.awaitLimbo(g, err)
	}
	if err == nil || !noRMID(err) || errors.Is(err, syscall.EBUSY) || m.cfg.RMIDReclaim != config.RMIDReclaimIdle {
		return nil, err
	}
	lim, lerr := m.readLimbo()
	if lerr != nil {
		// Whether an RMID freed now would be usable is unknown: no pod's life is ended
		// on a guess.
		m.log.Warn("reclaiming an RMID: reading the kernel's limbo threshold", "err", lerr)
		return nil, err
	}
	// The new group is made while the reclaimed group's lock is still held: a container of
	// that pod arriving meanwhile (it waits for the lock, then finds its group gone and
	// makes one) cannot take the RMID its group's end freed for this pod.
	create := func() error {
		err := m.rs.Ensure(g)
		if lim.on && errors.Is(err, syscall.EBUSY) {
			// The RMID is in limbo until the worker's next pass.
			err = m.awaitLimbo(g, err)
		}
		return err
	}
	st, made, ok := m.reclaim(g.Name, lim, create)
	if !ok {
		return nil, err
	}
	return &st, made
}

// awaitLimbo tries Ensure again while it says EBUSY (err), for at most limboWait: the
// kernel's limbo worker frees a clean RMID on its next pass, within a second.
func (m *Manager) awaitLimbo(g resctrlfs.Addr, err error) error {
	for start := time.Now(); errors.Is(err, syscall.EBUSY) && time.Since(start) < limboWait; {
		time.Sleep(limboRetry)
		err = m.rs.Ensure(g)
	}
	return err
}

// reclaim ends the group idle longest, so a new pod gets its RMID: an owned group with no
// live container and no running task, its .end snapshot written first, as the end of its
// retention would have. With limbo on, only a group whose llc_occupancy is below the limbo
// threshold in every domain is a candidate (clean): another's RMID would stay dirty. A group
// some call holds the lock of is passed over (someone works on that pod), after a short
// wait: self's lock is held by the caller. create makes self's group, under the ended group's
// lock; made is what it said.
func (m *Manager) reclaim(self string, lim limbo, create func() error) (st Step, made error, ok bool) {
	recs, err := m.store.List()
	if err != nil {
		m.log.Warn("reclaiming an RMID: listing the groups", "err", err)
	}
	// Only an idle group that exists holds an RMID: a pending record holds none.
	recs = slices.DeleteFunc(recs, func(r registry.Record) bool {
		return r.Group == self || !idle(r) || r.Pending != ""
	})
	// Idle longest first.
	slices.SortFunc(recs, func(a, b registry.Record) int { return a.IdleSince.Compare(*b.IdleSince) })
	// A few at most: this runs while the runtime waits on a container's start, and a
	// group passed over (locked, still holding tasks, its lines in the cache) costs a lock
	// wait, a tasks read or a counters read.
	for _, r := range recs[:min(len(recs), maxReclaimTries)] {
		st = Step{Action: vocab.Reclaimed, Group: r.Path, Pod: podOf(r)}
		done := false
		uerr := m.store.Update(r.Group, sweepLockWait, func(tx *registry.Tx) error {
			// Re-read under the lock: a container may have joined since the listing.
			if !tx.Owned || !idle(tx.Rec) || tx.Rec.Pending != "" {
				return nil
			}
			if lim.on {
				if dirty := m.dirtyLines(addrOf(tx.Rec), lim.threshold); dirty != "" {
					m.log.Info("an idle group is kept: its RMID would stay in the kernel's limbo", "group", tx.Rec.Path, "for", self, "detail", dirty)
					return nil
				}
			}
			action, detail := m.remove(tx)
			if action != vocab.Removed || detail == "group was already gone" {
				// Tasks still run in it (its pod lives), or the rmdir failed: it stays,
				// and the next one is tried.
				return nil
			}
			idleFor := m.now().Sub(*r.IdleSince).Round(time.Second)
			st.Detail, done = fmt.Sprintf("idle for %s of its %s retention: its RMID went to a new pod", idleFor, m.cfg.Retention), true
			made = create()
			return nil
		})
		if uerr != nil && !errors.Is(uerr, registry.ErrLocked) {
			m.log.Warn("reclaiming an RMID", "group", r.Path, "err", uerr)
		}
		if done {
			m.log.Info("reclaimed an idle group's RMID", "group", st.Group, "pod", st.Pod, "for", self, "detail", st.Detail)
			return st, made, true
		}
	}
	return Step{}, nil, false
}

// dirtyLines says why the group's RMID would stay in the kernel's limbo after its
// rmdir: an llc_occupancy at or above the threshold (__check_limbo: dirty while val >=
// resctrl_rmid_realloc_threshold), or one that cannot be read (the kernel keeps such an RMID
// dirty too); "" when every domain's reading is below it.
func (m *Manager) dirtyLines(g resctrlfs.Addr, threshold uint64) string {
	readings, missing, err := m.rs.Counters(g)
	if err != nil {
		return "its llc_occupancy cannot be read: " + err.Error()
	}
	for _, x := range missing {
		if x.Name == "llc_occupancy" {
			return fmt.Sprintf("its llc_occupancy in %s reads %s", x.Domain, x.Reason)
		}
	}
	seen := false
	for _, r := range readings {
		if r.Name != "llc_occupancy" {
			continue
		}
		seen = true
		if r.Value >= float64(threshold) {
			return fmt.Sprintf("llc_occupancy %.0f bytes in %s, not below max_threshold_occupancy %d", r.Value, r.Domain, threshold)
		}
	}
	if !seen {
		return "no llc_occupancy reading"
	}
	return ""
}

// idle reports whether a record has no container and its idle clock runs.
func idle(r registry.Record) bool { return len(r.Containers) == 0 && r.IdleSince != nil }

// CompletePending gives pending pods their groups now that an RMID may be free (a pod ended,
// a sweep removed groups), reclaiming idle groups under rmidReclaim: idle: every recorded
// container that still runs is moved in whole, and the pod is late-assigned. A pod none of
// whose containers runs is left to reconcile. Housekeeping: it never runs on a container's
// critical path (the sweep runs it; the NRI adapter after a pod's end, off the event).
func (m *Manager) CompletePending() (steps []Step, err error) {
	recs, err := m.store.List()
	for _, r := range recs {
		if r.Pending == "" {
			continue
		}
		var st []Step
		full := false
		uerr := m.store.Update(r.Group, sweepLockWait, func(tx *registry.Tx) error {
			var err error
			st, full, err = m.completeOne(tx)
			return err
		})
		if errors.Is(uerr, registry.ErrLocked) {
			continue // a call works on the pod: it completes it
		}
		for _, s := range st {
			m.count(s.Action)
		}
		steps = append(steps, st...)
		err = errors.Join(err, uerr)
		if full {
			// No RMID for this one: none for the next either (one that could be
			// reclaimed, this one would have taken).
			break
		}
	}
	return steps, err
}

// completeOne completes one pending pod under its lock. full says it stays pending for want
// of an RMID.
func (m *Manager) completeOne(tx *registry.Tx) (steps []Step, full bool, err error) {
	if !tx.Owned || tx.Rec.Pending == "" {
		return nil, false, nil
	}
	alive := false
	for id := range tx.Rec.Containers {
		alive = alive || initAlive(tx.Rec, id)
	}
	if !alive {
		return nil, false, nil
	}
	reclaimed, err := m.ensureReclaiming(addrOf(tx.Rec), true)
	if reclaimed != nil {
		steps = append(steps, *reclaimed)
	}
	if err != nil {
		if noRMID(err) {
			return steps, true, nil
		}
		return steps, false, fmt.Errorf("create %s: %w%s", tx.Rec.Path, err, m.kernelSaysSuffix())
	}
	// A new RMID: a new life (see reserve).
	tx.Rec.Created = m.now().UTC()
	m.writeSnapshot(tx.Rec, snapshot.Begin)
	moved, err := m.placeRecorded(tx, "")
	tx.Rec.LateAssigned = true
	steps = append(steps, Step{Action: vocab.Completed, Group: tx.Rec.Path, Pod: podOf(tx.Rec),
		Detail: fmt.Sprintf("was pending: %s; %d tasks moved in", tx.Rec.Pending, moved)})
	tx.Rec.Pending = ""
	return steps, false, errors.Join(err, tx.Save())
}
