package lifecycle

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// reserve makes sure the pod's group exists and records the container in it, under the
// pod's lock. created is true when this call made the group. st is the init's stat.
func (m *Manager) reserve(p Placement, name string, st procfs.Stat, out *Outcome) (created bool, err error) {
	err = m.store.Update(name, lockTimeout, func(tx *registry.Tx) error {
		if tx.Owned && m.expired(tx.Rec) {
			// Idle past the retention window: the pod's old life is over and its counts
			// are final. A new group makes sure nothing of the old one is carried over.
			// Unless it cannot go: tasks still running in it prove the pod lives on (a
			// process that outlived its poststop, one the registry never knew), so this
			// container joins that life; a failed rmdir is housekeeping's to retry, never
			// a reason to leave a container unplaced.
			if action, detail := m.remove(tx); action != vocab.Removed {
				m.log.Info("an expired group could not end: the container joins its life", "group", tx.Rec.Path, "detail", detail)
				tx.Rec.RemoveFailed = ""
			}
		}
		if !tx.Owned {
			tx.Rec = m.podRecord(name, out.Group, p.Class, p.Pod)
		}
		if err := m.admit(tx, p); err != nil {
			return err
		}
		if p.Pod.Runtime == identity.NRI {
			tx.Rec.NRI = true
		}
		owned := tx.Owned
		// Another front end (the hook and the NRI adapter on one node), or a repeated
		// event, placed this very init already: it is one container, recorded once.
		again := owned && sameInit(tx.Rec, p.ContainerID, p.Pid, st.StartTime)
		if p.Late {
			tx.Rec.LateAssigned = true
		}
		if wanted, refused := mbmWanted(m.cfg, p.Pod, p.Annotations); wanted {
			tx.Rec.MBMWanted = true
		} else if refused != "" {
			m.annotationRefused(p, refused)
		}
		// The container is in the record before mkdir: a process killed between mkdir and
		// the tasks write then leaves a group reconcile knows is ours (and completes or
		// removes), not an unprovable orphan holding an RMID forever.
		m.recordContainer(&tx.Rec, p.ContainerID, p.Pid, &st, p.Cgroup)
		// The name its front end was told (NRI's Container.Name, the runtime's annotation),
		// for the exporter's container label; none fits, none is kept.
		tx.Rec.SetName(p.ContainerID, p.Pod.ContainerName)
		if pc := podCgroupV2(p.PodCgroup, tx.Rec.Cgroups[p.ContainerID]); pc != "" {
			tx.Rec.PodCgroup = pc
		}
		tx.Rec.IdleSince = nil
		if err := errors.Join(tx.Save(), m.store.BindContainer(p.ContainerID, name)); err != nil {
			return err
		}
		var err error
		var reclaimed *Step
		created, reclaimed, err = m.ensureGroup(tx.Rec, owned)
		if reclaimed != nil {
			m.count(vocab.Reclaimed)
			out.Detail = fmt.Sprintf("the RMID of %s, idle longest, was reclaimed", reclaimed.Group)
		}
		if err != nil {
			return m.undoReserve(tx, p.ContainerID, owned, out, err)
		}
		out.Action = vocab.Joined
		if again {
			out.Detail = "already placed (by another front end or an earlier event)"
		}
		if created {
			out.Action = vocab.Created
			if err := m.beginLife(tx, !owned); err != nil {
				return err
			}
		}
		if tx.Rec.Pending != "" {
			// The pod waited for an RMID: its other containers have run outside the
			// group until now. Place them whole, and say their counts are partial.
			moved, err := m.placeRecorded(tx, p.ContainerID)
			if moved > 0 {
				out.Detail = fmt.Sprintf("completed the pending pod: %d tasks of its other containers moved in", moved)
			}
			tx.Rec.Pending = ""
			return errors.Join(err, tx.Save())
		}
		return nil
	})
	return created, err
}

// undoReserve handles a group that could not be made, after the container was recorded.
func (m *Manager) undoReserve(tx *registry.Tx, id string, owned bool, out *Outcome, err error) error {
	switch {
	case errors.Is(err, resctrlfs.ErrNoRMID):
		// Remember the pod so a later call or reconcile completes it.
		tx.Rec.Pending = err.Error()
		err = errors.Join(err, tx.Save())
		out.Action = vocab.Pending
	case !owned:
		// Not ours after all (a foreign group, a failed mkdir): drop the claim.
		err = errors.Join(err, tx.Delete(), m.store.UnbindContainer(id))
	default:
		forgetContainer(&tx.Rec, id)
		err = errors.Join(err, tx.Save(), m.store.UnbindContainer(id))
	}
	if errors.Is(err, ErrGroupGone) {
		// A join whose group ended since its front end looked (a reclaim took it, the
		// pod ended): nothing failed, the front end places the container afresh.
		return err
	}
	m.recordFailure(vocab.FailCreate, id, tx.Rec.Group, err)
	return err
}

// admit decides whether the container may join an existing record: same allocation class,
// same live sandbox.
func (m *Manager) admit(tx *registry.Tx, p Placement) error {
	rec := &tx.Rec
	if rec.Containers == nil {
		rec.Containers = map[string]time.Time{}
	}
	if !tx.Owned {
		return nil
	}
	if rec.Class != p.Class {
		return fmt.Errorf("%w: the pod's group is under class %q, this container runs in %q; a group cannot span classes",
			resctrlfs.ErrClassMismatch, ClassLabel(rec.Class), ClassLabel(p.Class))
	}
	idn := p.Pod
	if idn.SandboxID != "" && rec.SandboxID != "" && idn.SandboxID != rec.SandboxID {
		if !rec.SandboxEnded {
			err := fmt.Errorf("%w: pod %s is bound to sandbox %.12s, the container claims sandbox %.12s", ErrSpoofed, rec.Group, rec.SandboxID, idn.SandboxID)
			m.recordFailure(vocab.FailIdentity, p.ContainerID, rec.Group, err)
			return err
		}
		// kubelet recreated the pod's sandbox under the same UID: the group stays the pod's.
		rec.SandboxID, rec.SandboxEnded = idn.SandboxID, false
	}
	return nil
}

// ensureGroup makes the group (or checks it is still there). created is true when this call
// allocated its RMID; reclaimed, the idle group that made room for it (rmidReclaim).
func (m *Manager) ensureGroup(rec registry.Record, owned bool) (created bool, reclaimed *Step, err error) {
	existed := m.rs.Exists(addrOf(rec))
	if existed && !owned {
		return false, nil, fmt.Errorf("%w: %s", ErrForeign, rec.Path)
	}
	if reclaimed, err = m.ensureReclaiming(addrOf(rec), false); err != nil {
		if noRMID(err) {
			return false, reclaimed, fmt.Errorf("%w for %s: %s", resctrlfs.ErrNoRMID, rec.Path, m.kernelSays())
		}
		return false, reclaimed, fmt.Errorf("create %s: %w%s", rec.Path, err, m.kernelSaysSuffix())
	}
	return !existed, reclaimed, nil
}

// release takes back a reservation whose threads could not be moved, and removes the group
// if this call made it and nothing else joined.
func (m *Manager) release(id, name string, created bool) error {
	return m.store.Update(name, lockTimeout, func(tx *registry.Tx) error {
		if !tx.Owned {
			return nil
		}
		forgetContainer(&tx.Rec, id)
		if err := m.store.UnbindContainer(id); err != nil {
			return err
		}
		if created && len(tx.Rec.Containers) == 0 {
			// Leave no empty group behind for a container that will not run in it.
			if _, detail := m.remove(tx); detail != "" {
				m.log.Warn("could not remove the group made for a failed container", "group", tx.Rec.Path, "detail", detail)
			}
			return nil
		}
		return tx.Save()
	})
}

// recordContainer remembers the container, its init (by pid and start time: a pid alone is
// reused; st is the init's stat, nil when it could not be read) and its cgroup v2 path (for
// the pressure readers; read from /proc when cg is "").
func (m *Manager) recordContainer(rec *registry.Record, id string, pid int, st *procfs.Stat, cg string) {
	if rec.Containers == nil {
		rec.Containers = map[string]time.Time{}
	}
	if _, ok := rec.Containers[id]; !ok {
		rec.Containers[id] = m.now().UTC()
	}
	if st != nil {
		if rec.Inits == nil {
			rec.Inits = map[string]registry.Init{}
		}
		rec.Inits[id] = registry.Init{Pid: pid, Start: st.StartTime}
	}
	if cg == "" {
		cg, _ = m.cg.CgroupOf(pid)
	}
	if cg != "" {
		if rec.Cgroups == nil {
			rec.Cgroups = map[string]string{}
		}
		rec.Cgroups[id] = cg
	}
}

// podCgroupV2 is the cgroup v2 path of the pod's cgroup the runtime named (see
// Placement.PodCgroup): the parent of the container's cgroup v2 path when it is that cgroup,
// else "". A container path that is not clean names no cgroup of this cgroup namespace: a
// cgroup outside the reader's namespace shows in /proc/<pid>/cgroup as "/../x/c1", whose
// cleaned parent ("/x", by path.Dir) is another cgroup, and whose lexical one climbs out of
// the cgroup mount once joined to it. No pod cgroup is recorded for it.
func podCgroupV2(named, container string) string {
	if named == "" || container == "" || path.Clean(container) != container {
		return ""
	}
	parent := path.Dir(container)
	if parent == "/" || parent == "." {
		return ""
	}
	if strings.HasPrefix(named, "/") {
		// A cgroupfs path, as the cgroup2 mount shows it (or, in another cgroup namespace,
		// ends it).
		if strings.HasSuffix(parent, named) {
			return parent
		}
		return ""
	}
	// A systemd slice: its directory is named as the slice.
	if path.Base(parent) == named {
		return parent
	}
	return ""
}

// sameInit reports whether the record holds the container with this very init (pid and
// start time: a pid alone is reused).
func sameInit(rec registry.Record, id string, pid int, start uint64) bool {
	in, ok := rec.Inits[id]
	return ok && in.Pid == pid && in.Start == start
}

// forgetContainer takes a container out of a record.
func forgetContainer(rec *registry.Record, id string) {
	delete(rec.Containers, id)
	delete(rec.Inits, id)
	delete(rec.Cgroups, id)
	delete(rec.Names, id)
}
