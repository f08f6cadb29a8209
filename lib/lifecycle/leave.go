package lifecycle

import (
	"fmt"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// Departure is a container that is gone (the hook's poststop, NRI's RemoveContainer).
type Departure struct {
	ContainerID string
	// Pod and Annotations find the group when the container has no binding (placed before
	// the state dir was lost); a front end that has neither leaves them empty.
	Pod         identity.Identity
	Annotations map[string]string
}

// Leave takes a container out of its pod's record. The group outlives its last container
// for the retention window, so a restart keeps the pod's RMID. A pod's sandbox leaving
// means the pod is gone: that is EndPod.
func (m *Manager) Leave(d Departure) (out Outcome, err error) {
	out = Outcome{Container: d.ContainerID, Action: vocab.Skipped}
	if d.Pod.Sandbox {
		out, err = m.EndPod(PodEnd{PodUID: d.Pod.PodUID, SandboxID: d.Pod.SandboxID}) // EndPod counts it
		out.Container = d.ContainerID
		return out, err
	}
	again := false // a departure made already is no outcome of its own to count
	defer func() {
		if !again {
			m.count(ActionOf(out, err))
		}
	}()
	name, err := m.store.ContainerGroup(d.ContainerID)
	if err != nil {
		return out, err
	}
	// A skipped departure still says whose container it was and why it was skipped.
	out.Pod = d.Pod.PodUID
	if name == "" {
		// Not placed by us (skipped, or the state dir was lost), or gone already (NRI sends
		// StopContainer and then RemoveContainer): the identity may still name a group we
		// own.
		var why string
		if name, why = groupName(m.cfg, d.ContainerID, d.Pod, d.Annotations); name == "" {
			out.Detail = "not monitored: " + why
			return out, nil
		}
		if o, ok := m.departed(name, d.ContainerID, out); ok {
			again = o.Action != vocab.Skipped
			return o, nil
		}
	}
	err = m.store.Update(name, lockTimeout, func(tx *registry.Tx) error {
		if !tx.Owned {
			out.Detail = notOurs(name)
			return m.store.UnbindContainer(d.ContainerID)
		}
		out.Group, out.Pod = tx.Rec.Path, podOf(tx.Rec)
		forgetContainer(&tx.Rec, d.ContainerID)
		if err := m.store.UnbindContainer(d.ContainerID); err != nil {
			return err
		}
		out.Action = vocab.Left
		if len(tx.Rec.Containers) == 0 {
			if tx.Rec.IdleSince == nil {
				// A second departure of the same container (NRI sends StopContainer and
				// RemoveContainer) does not restart the retention clock.
				now := m.now().UTC()
				tx.Rec.IdleSince = &now
			}
			out.Action = vocab.Idle
			if m.cfg.Retention == 0 {
				out.Action, out.Detail = m.remove(tx)
				return nil
			}
		}
		return tx.Save()
	})
	return out, err
}

// notOurs is why a departure was skipped when its group has no record: CRI-O's poststop at
// rmp for a pod whose containers died while it was down, after reconcile removed the group;
// a group that was never made.
func notOurs(name string) string {
	return "no group of ours for it (" + name + "): removed already, or never made"
}

// departed answers, without the pod's lock, a departure that would change nothing: the
// container has no binding and its pod's record (replaced whole by rename, so a read
// without the lock sees all of one) does not hold it, and no idle clock is to start and no
// removal is due. out is the outcome so far; ok is false when the departure must go
// through the lock.
func (m *Manager) departed(name, id string, out Outcome) (Outcome, bool) {
	rec, owned, err := m.store.Load(name)
	switch {
	case err != nil:
		return out, false
	case !owned:
		out.Detail = notOurs(name)
		return out, true
	}
	_, c := rec.Containers[id]
	_, i := rec.Inits[id]
	_, g := rec.Cgroups[id]
	if c || i || g {
		return out, false
	}
	out.Group, out.Pod, out.Action = rec.Path, podOf(rec), vocab.Left
	if len(rec.Containers) == 0 {
		if rec.IdleSince == nil || m.cfg.Retention == 0 {
			return out, false
		}
		out.Action = vocab.Idle
	}
	return out, true
}

// PodEnd is a pod that is gone: its sandbox's poststop, NRI's RemovePodSandbox.
type PodEnd struct {
	PodUID    string
	SandboxID string // the sandbox that ended; a group bound to another live one stays
	// Group is the group name when the front end knows it; otherwise the pod UID, or the
	// sandbox id for a pod without one (podman), names it.
	Group string
}

// EndPod ends a pod's group now: its .end snapshot is written and the group removed (unless
// tasks still run in it, when it is kept and retried). Runtimes remove a pod's containers
// before its sandbox, so containers still recorded lost their own departure. A group bound
// to another live sandbox of the same pod UID (kubelet re-created the sandbox before it
// removed the old one) stays.
func (m *Manager) EndPod(e PodEnd) (out Outcome, err error) {
	defer func() { m.count(ActionOf(out, err)) }()
	name := e.Group
	if name == "" {
		name = e.PodUID
	}
	if name == "" {
		name = e.SandboxID
	}
	out = Outcome{Pod: e.PodUID, Action: vocab.Skipped}
	if name == "" || !ValidGroupName(name) {
		return out, nil
	}
	name = canonicalGroupName(name)
	err = m.store.Update(name, lockTimeout, func(tx *registry.Tx) error {
		if !tx.Owned {
			return nil
		}
		out.Group, out.Pod = tx.Rec.Path, podOf(tx.Rec)
		if e.SandboxID != "" && tx.Rec.SandboxID != "" && e.SandboxID != tx.Rec.SandboxID {
			out.Action, out.Detail = vocab.Kept, fmt.Sprintf("the group is bound to the pod's newer sandbox %.12s", tx.Rec.SandboxID)
			return nil
		}
		tx.Rec.SandboxEnded = true
		for id := range tx.Rec.Containers {
			if err := m.store.UnbindContainer(id); err != nil {
				return err
			}
		}
		tx.Rec.Containers, tx.Rec.Inits, tx.Rec.Cgroups = map[string]time.Time{}, nil, nil
		if tx.Rec.IdleSince == nil {
			now := m.now().UTC()
			tx.Rec.IdleSince = &now
		}
		out.Action, out.Detail = m.remove(tx)
		return nil
	})
	return out, err
}

// remove removes an owned group under its lock: final readings to the .end snapshot first,
// then rmdir, then the record. A group that still has tasks is kept (the kernel would hand
// them to the parent group and its counts would be lost); a failed rmdir is recorded and
// retried, never forgotten.
func (m *Manager) remove(tx *registry.Tx) (vocab.Action, string) {
	rec := tx.Rec
	tasks, exists := m.rs.Tasks(addrOf(rec))
	if !exists {
		// Gone already (re-mount, a runtime's RDT setup): nothing to free, and no .end
		// can be read; the life's .begin is pruned as finished (its group is gone).
		if err := tx.Delete(); err != nil {
			return vocab.Kept, err.Error()
		}
		return vocab.Removed, "group was already gone"
	}
	// A zombie's counts are final, and poststop often comes while the container's last
	// processes await their reaper: only tasks that can still run keep the group.
	if n := procfs.Running(tasks); n > 0 {
		return vocab.Kept, m.keep(tx, fmt.Sprintf("still has %d tasks", n))
	}
	m.writeSnapshot(rec, snapshot.End)
	if err := m.rs.Remove(addrOf(rec)); err != nil {
		m.recordFailure(vocab.FailRemove, rec.Path, podOf(rec), err)
		return vocab.Kept, m.keep(tx, err.Error()+m.kernelSaysSuffix())
	}
	if err := tx.Delete(); err != nil {
		return vocab.Removed, err.Error()
	}
	return vocab.Removed, ""
}

// keep saves the record with the reason removal did not happen, so it is retried.
func (m *Manager) keep(tx *registry.Tx, why string) string {
	tx.Rec.RemoveFailed = why
	if err := tx.Save(); err != nil {
		return why + "; " + err.Error()
	}
	return why
}

// podOf names a record's pod for logs and failures: its UID, else its group.
func podOf(rec registry.Record) string {
	if rec.PodUID != "" {
		return rec.PodUID
	}
	return rec.Group
}
