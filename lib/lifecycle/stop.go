package lifecycle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/lib/state"
)

// Stop takes a container out of its pod's record (the poststop stage: the container is
// deleted). The group outlives its last container for the retention window, so a restart
// keeps the pod's RMID; a sandbox's poststop means the pod is gone and the group goes now.
func (m *Manager) Stop(st specs.State) (out Outcome, err error) {
	out = Outcome{Container: st.ID}
	name, err := m.store.ContainerGroup(st.ID)
	if err != nil {
		return out, err
	}
	idn, idErr := identity.FromAnnotations(st.ID, st.Annotations)
	if name == "" {
		// Not placed by us (skipped, or the state dir was lost): the annotations may still
		// name a group we own.
		if idErr != nil {
			out.Action = "skipped"
			return out, nil
		}
		name, _ = groupName(m.cfg, st.ID, idn, st.Annotations)
		if name == "" {
			out.Action = "skipped"
			return out, nil
		}
	}
	lock, err := m.store.Lock(name, lockTimeout)
	if err != nil {
		return out, err
	}
	defer func() { err = errors.Join(err, lock.Unlock()) }()
	rec, owned, err := m.store.Load(name)
	if err != nil || !owned {
		out.Action = "skipped"
		return out, errors.Join(err, m.store.UnbindContainer(st.ID))
	}
	out.Group, out.Pod = rec.Path, rec.PodUID
	delete(rec.Containers, st.ID)
	delete(rec.Inits, st.ID)
	if err := m.store.UnbindContainer(st.ID); err != nil {
		return out, err
	}
	sandboxGone := idErr == nil && idn.Sandbox && idn.SandboxID == rec.SandboxID
	if sandboxGone {
		// The pod is gone: runtimes remove a pod's containers before its sandbox, so any
		// still recorded lost their poststop. The group goes now (unless tasks still run).
		rec.SandboxEnded = true
		for id := range rec.Containers {
			if err := m.store.UnbindContainer(id); err != nil {
				return out, err
			}
		}
		rec.Containers, rec.Inits = nil, nil
	}
	out.Action = "left"
	if len(rec.Containers) == 0 {
		now := m.now().UTC()
		rec.IdleSince = &now
		out.Action = "idle"
		if sandboxGone || m.cfg.Retention == 0 {
			out.Action, out.Detail = m.remove(rec)
			return out, nil
		}
	}
	return out, m.store.Save(rec)
}

// remove removes an owned group: final readings to the .end snapshot first, then rmdir,
// then the record. A group that still has tasks is kept (the kernel would hand them to the
// parent group and its counts would be lost); a failed rmdir is recorded and retried.
func (m *Manager) remove(rec state.Record) (action, detail string) {
	dir := filepath.Join(m.cfg.ResctrlRoot, rec.Path)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		// Gone already (re-mount, a runtime's RDT setup): nothing to free.
		if err := m.store.Delete(rec.Group); err != nil {
			return "kept", err.Error()
		}
		return "removed", "group was already gone"
	}
	if n, err := taskCount(dir); err != nil || n > 0 {
		detail := fmt.Sprintf("still has %d tasks", n)
		if err != nil {
			detail = err.Error()
		}
		return "kept", m.keep(rec, detail)
	}
	if _, err := m.mon.EnsureGroup(rec.Group, rec.Class); err != nil {
		return "kept", m.keep(rec, err.Error())
	}
	m.writeSnapshot(rec, snapshot.End)
	if err := m.mon.Remove(rec.Group); err != nil {
		m.recordFailure("remove", rec.Group, err)
		return "kept", m.keep(rec, err.Error()+m.kernelSaysSuffix())
	}
	if err := m.store.Delete(rec.Group); err != nil {
		return "removed", err.Error()
	}
	return "removed", ""
}

// keep saves the record with the reason removal did not happen, so it is retried.
func (m *Manager) keep(rec state.Record, why string) string {
	rec.RemoveFailed = why
	if err := m.store.Save(rec); err != nil {
		return why + "; " + err.Error()
	}
	return why
}

// removeEmpty undoes a group this call created for a container that could not be placed.
func (m *Manager) removeEmpty(rec state.Record) {
	if _, detail := m.remove(rec); detail != "" {
		m.log.Warn("could not remove the group made for a failed container", "group", rec.Path, "detail", detail)
	}
}

// taskCount counts the group's tasks that can still run. A zombie is still listed (the
// kernel keeps it in its group until it is reaped) but will never run again: its counts are
// final, and poststop often comes while the container's last processes await their reaper.
func taskCount(dir string) (int, error) {
	in, ok := readTasks(dir)
	if !ok {
		return 0, fmt.Errorf("read tasks of %s: the group is gone", dir)
	}
	n := 0
	for tid := range in {
		if !procfs.Finished(tid) {
			n++
		}
	}
	return n, nil
}

// sweepEvery limits how often a hook call looks for expired idle groups: listing every
// record on every container start would cost the hot path for nothing.
const sweepEvery = 10 * time.Second

// sweepLockWait is how long a sweep waits for a group's lock before leaving the group to
// the next sweep: a hook working on the pod is doing the job.
const sweepLockWait = 200 * time.Millisecond

// Sweep removes owned groups that have been idle longer than the retention window, and
// retries failed removals. Groups locked by a running hook are left for the next sweep.
func (m *Manager) Sweep() (removed []string, err error) {
	recs, err := m.store.List()
	for _, r := range recs {
		if !m.expired(r) {
			continue
		}
		// A short wait, not none: a lock is briefly held after its holder closed it while
		// a forked child of that process has not yet exec'd (flock follows the open file).
		lock, lerr := m.store.Lock(r.Group, sweepLockWait)
		if lerr != nil {
			continue
		}
		// Re-read under the lock: a container may have joined since the listing.
		cur, owned, lerr := m.store.Load(r.Group)
		if lerr == nil && owned && m.expired(cur) {
			if action, _ := m.remove(cur); action == "removed" {
				removed = append(removed, cur.Path)
			}
		}
		err = errors.Join(err, lerr, lock.Unlock())
	}
	return removed, err
}

// MaybeSweep runs Sweep when the last one is older than sweepEvery.
func (m *Manager) MaybeSweep() ([]string, error) {
	stamp := filepath.Join(m.store.Dir(), "last-sweep")
	if fi, err := os.Stat(stamp); err == nil && m.now().Sub(fi.ModTime()) < sweepEvery {
		return nil, nil
	}
	if err := os.WriteFile(stamp, nil, 0o600); err != nil {
		return nil, fmt.Errorf("sweep stamp: %w", err)
	}
	now := m.now()
	_ = os.Chtimes(stamp, now, now)
	return m.Sweep()
}

// expired reports whether a group has been idle for the whole retention window.
func (m *Manager) expired(r state.Record) bool {
	return len(r.Containers) == 0 && r.IdleSince != nil && m.now().Sub(*r.IdleSince) >= time.Duration(m.cfg.Retention)
}
