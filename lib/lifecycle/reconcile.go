package lifecycle

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/container"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// Step is one thing reconcile did (or, in a dry run, would do).
type Step struct {
	Action vocab.Action `json:"action"`
	Group  string       `json:"group"` // path below the resctrl root
	Pod    string       `json:"pod,omitempty"`
	Detail string       `json:"detail,omitempty"`
}

const (
	// reconcileLockWait is how long reconcile waits for a pod a hook is working on before
	// leaving it to the next run: the hook is doing the job.
	reconcileLockWait = 2 * time.Second
)

func busy(group, pod string) Step {
	return Step{Action: vocab.Busy, Group: group, Pod: pod, Detail: "a hook holds the pod's lock; left to the next run"}
}

// ReconcileOptions say how far reconcile goes.
type ReconcileOptions struct {
	// DryRun says what would be done and changes nothing.
	DryRun bool
	// Adopt takes a group of a live pod's name that has no record as ours when it holds
	// the pod's tasks: the operator's word, after the state dir was lost, that such groups
	// are ours. Without it they are refused and never touched: the nri-plugins resctrl-mon
	// plugin names its groups by pod UID too and holds the same tasks, and so may anything
	// made by hand, so a group's name and tasks prove nothing.
	Adopt bool
	// Sandboxes are the live pod sandboxes of the runtime that calls, by id (the NRI
	// adapter's Synchronize: the runtime's pod list); nil when unknown. A pod that runtime
	// told of (Record.NRI) whose sandbox is not among them is gone, and its group ends now,
	// as RemovePodSandbox would have ended it, not after the retention window. A pod no
	// runtime told of over NRI (a hook's, perhaps under another runtime) is not judged by
	// this list.
	Sandboxes map[string]bool
}

// sandboxGone reports whether the calling runtime's pod list proves rec's sandbox is gone.
func (o ReconcileOptions) sandboxGone(rec registry.Record) bool {
	return o.Sandboxes != nil && rec.NRI && rec.SandboxID != "" && !o.Sandboxes[rec.SandboxID]
}

// wanted is a group that live containers need.
type wanted struct {
	name, path, class string
	idn               identity.Identity
	containers        []container.Container
}

func (w *wanted) addr() resctrlfs.Addr { return resctrlfs.Addr{Class: w.class, Name: w.name} }

// Reconcile makes resctrl and the registry match the live containers: every live pod has its
// group with all its tasks in it, and no owned group outlives its pod by more than the
// retention window. It repairs what a crashed runtime or hook, a poststop that never ran, a
// re-mount of resctrl, a runtime's RDT setup (which deletes empty groups) or a wiped state
// dir left behind (with o.Adopt). It takes the same per-pod locks as the hooks, so it is safe
// to run while they run, and it is idempotent: a second run finds nothing to do.
func (m *Manager) Reconcile(live []container.Container, o ReconcileOptions) ([]Step, error) {
	dryRun := o.DryRun
	var acts []Step
	var errs []error
	cgroups, err := m.cg.Index()
	if err != nil {
		return nil, err
	}
	want := map[string]*wanted{}
	for _, c := range live {
		idn, err := identityOf(c)
		if err != nil {
			acts = append(acts, Step{Action: vocab.Refused, Group: c.ID, Detail: err.Error()})
			continue
		}
		name, _ := groupName(m.cfg, c.ID, idn, c.Annotations)
		if name == "" || idn.Sandbox {
			// A pod's sandbox is never in its group (see Place): it neither needs the
			// group nor keeps it alive.
			continue
		}
		w := want[name]
		if w == nil {
			w = &wanted{name: name, path: GroupPath(c.ClosID, name), class: c.ClosID, idn: idn}
			want[name] = w
		}
		if c.ClosID != w.class {
			acts = append(acts, Step{Action: vocab.Refused, Group: w.path, Pod: idn.PodUID,
				Detail: fmt.Sprintf("container %s runs in class %q, the pod's group is under %q", c.ID, ClassLabel(c.ClosID), ClassLabel(w.class))})
			continue
		}
		w.containers = append(w.containers, c)
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a, err := m.reconcileLive(want[n], cgroups, o)
		acts = append(acts, a...)
		errs = append(errs, err)
	}
	recs, err := m.store.List()
	errs = append(errs, err)
	for _, r := range recs {
		if want[r.Group] != nil {
			continue
		}
		a, err := m.reconcileGone(r.Group, o)
		acts = append(acts, a...)
		errs = append(errs, err)
	}
	if !dryRun {
		errs = append(errs, m.unbindDead(live))
		for _, a := range acts {
			m.count(a.Action)
		}
	}
	return acts, errors.Join(errs...)
}

// identityOf is who a live container is: what its front end was told, or its annotations.
func identityOf(c container.Container) (identity.Identity, error) {
	if c.Pod != nil {
		return *c.Pod, nil
	}
	return identity.FromSpec(c.ID, c.Annotations, c.CgroupsPath)
}

// reconcileLive gives a live pod its group and puts all its tasks in it.
func (m *Manager) reconcileLive(w *wanted, cgroups cgroup.Index, o ReconcileOptions) (acts []Step, err error) {
	dryRun := o.DryRun
	act := func(what vocab.Action, detail string) {
		acts = append(acts, Step{Action: what, Group: w.path, Pod: w.idn.PodUID, Detail: detail})
	}
	err = m.store.Update(w.name, reconcileLockWait, func(tx *registry.Tx) error {
		// One read of the tasks file says whether the group exists and what it holds: on
		// the timer's common path (everything in place) that is all reconcile touches in
		// resctrl.
		in, exists := m.rs.Tasks(w.addr())
		missing := m.missingTasks(in, w.containers, cgroups)
		owned := tx.Owned
		if owned && tx.Rec.Class != w.class {
			act(vocab.Refused, fmt.Sprintf("the pod's group is under class %q, its containers run in %q", ClassLabel(tx.Rec.Class), ClassLabel(w.class)))
			return nil
		}
		// What sameRecord compares, apart: syncContainers changes the record's maps in place.
		before := tx.Rec
		before.Containers, before.Names = maps.Clone(tx.Rec.Containers), maps.Clone(tx.Rec.Names)
		switch {
		case !owned && exists && !o.Adopt:
			act(vocab.Refused, "a group of that name exists and is not ours (after a lost state dir, `reconcile --adopt` takes back the groups that hold their pods' tasks)")
			return nil
		case !owned && exists:
			// The operator says the registry was lost: the group is taken as ours if it
			// holds the pod's own tasks.
			if !holdsAny(in, w.containers) {
				act(vocab.Refused, "a group of that name exists, holds none of the pod's tasks, and is not ours")
				return nil
			}
			tx.Rec = m.podRecord(w.name, w.path, w.class, w.idn)
			act(vocab.Adopted, "registry entry rebuilt")
		case !owned:
			tx.Rec = m.podRecord(w.name, w.path, w.class, w.idn)
			act(vocab.Created, "")
		case !exists && tx.Rec.Pending != "":
			act(vocab.Completed, "was pending: "+tx.Rec.Pending)
		case !exists:
			act(vocab.Recreated, "the group had disappeared")
		}
		if dryRun {
			if n := taskCount(missing); exists && owned && n > 0 {
				act(vocab.Moved, fmt.Sprintf("%d tasks", n))
			}
			return nil
		}
		if exists && owned && len(missing) == 0 {
			// In place: only the record may need the live container list.
			if err := m.syncContainers(&tx.Rec, w); err != nil {
				return err
			}
			tx.Rec.IdleSince = nil
			if !sameRecord(before, tx.Rec) {
				return tx.Save()
			}
			return nil
		}
		if done, err := m.makeLive(tx, w, &acts); done || err != nil {
			return err
		}
		if !exists {
			if err := m.beginLife(tx, !owned); err != nil {
				return err
			}
		}
		// No leader here: reconcile does not reclassify, so threads outside the class stay.
		moved, err := m.assignIn(w.addr(), missing)
		if err != nil {
			return err
		}
		if moved > 0 {
			if exists && owned {
				act(vocab.Moved, fmt.Sprintf("%d tasks were outside the group", moved))
			}
			// The work these tasks did before now was counted elsewhere.
			tx.Rec.LateAssigned = true
		}
		tx.Rec.Pending, tx.Rec.IdleSince, tx.Rec.RemoveFailed = "", nil, ""
		if err := m.syncContainers(&tx.Rec, w); err != nil {
			return err
		}
		if !sameRecord(before, tx.Rec) || !owned {
			return tx.Save()
		}
		return nil
	})
	if errors.Is(err, registry.ErrLocked) {
		return []Step{busy(w.path, w.idn.PodUID)}, nil
	}
	return acts, err
}

// makeLive makes w's group or adopts it, under the pod's lock (tx), for reconcileLive:
// goresctrl adopts an existing group or makes a missing one; either way it tracks it. done
// says the pass over this pod ends here, with err: its class is not in resctrl, or it waits
// for an RMID (pending), its own step (the last of acts) replaced by that; or the group
// could not be made.
func (m *Manager) makeLive(tx *registry.Tx, w *wanted, acts *[]Step) (done bool, err error) {
	reclaimed, err := m.ensureReclaiming(w.addr(), false)
	if reclaimed != nil {
		// Before the pod's own step (created, completed, recreated), which a pod left
		// pending replaces.
		*acts = slices.Insert(*acts, max(len(*acts)-1, 0), *reclaimed)
	}
	instead := func(what vocab.Action, detail string) {
		if len(*acts) > 0 {
			*acts = (*acts)[:len(*acts)-1]
		}
		*acts = append(*acts, Step{Action: what, Group: w.path, Pod: w.idn.PodUID, Detail: detail})
	}
	switch {
	case err == nil:
		return false, nil
	case w.class != "" && errors.Is(err, fs.ErrNotExist):
		// The class is not there: removed while the pod ran (see the package comment of
		// resctrlfs, "Removal"), or not made yet. Nothing can be made under it, and nothing
		// failed here: the record stays, and a pass after the class is made again makes the
		// group.
		instead(vocab.Refused, fmt.Sprintf("its class %q is not in resctrl (removed while the pod ran, the kernel moved its tasks to the root group); its group is made again once the class is", w.class))
		return true, nil
	case !noRMID(err):
		return true, fmt.Errorf("create %s: %w%s", w.path, err, m.kernelSaysSuffix())
	}
	tx.Rec.Pending = fmt.Sprintf("%s for %s: %s", resctrlfs.ErrNoRMID, w.path, m.kernelSays())
	instead(vocab.Pending, tx.Rec.Pending)
	return true, errors.Join(m.syncContainers(&tx.Rec, w), tx.Save())
}

// syncContainers makes the record's containers exactly the live ones, and binds them.
func (m *Manager) syncContainers(rec *registry.Record, w *wanted) error {
	if rec.Containers == nil {
		rec.Containers = map[string]time.Time{}
	}
	if w.idn.Runtime == identity.NRI {
		rec.NRI = true
	}
	live := map[string]bool{}
	var errs []error
	for _, c := range w.containers {
		live[c.ID] = true
		if _, ok := rec.Containers[c.ID]; !ok {
			var st *procfs.Stat
			if s, err := procfs.ReadStat(c.Pid); err == nil {
				st = &s
			}
			m.recordContainer(rec, c.ID, c.Pid, st, "")
		}
		// A container's name, where its front end knows one: also for a container recorded
		// by a version that kept none, so its series get the name after an upgrade.
		if idn, err := identityOf(c); err == nil && idn.ContainerName != "" && rec.Name(c.ID) != idn.ContainerName {
			rec.SetName(c.ID, idn.ContainerName)
		}
		named := c.PodCgroup
		if c.Pod == nil {
			named = identity.PodCgroup(w.idn, c.ID, c.CgroupsPath)
		}
		if pc := podCgroupV2(named, rec.Cgroups[c.ID]); pc != "" {
			rec.PodCgroup = pc
		}
		if g, _ := m.store.ContainerGroup(c.ID); g != w.name {
			errs = append(errs, m.store.BindContainer(c.ID, w.name))
		}
	}
	for id := range rec.Containers {
		if !live[id] && !initAlive(*rec, id) {
			forgetContainer(rec, id)
			errs = append(errs, m.store.UnbindContainer(id))
		}
	}
	return errors.Join(errs...)
}

// missingTasks lists the threads of the pod's containers that are not in the group, by
// container cgroups.
func (m *Manager) missingTasks(in map[int]bool, cs []container.Container, cgroups cgroup.Index) []cgroupTasks {
	var out []cgroupTasks
	for _, c := range cs {
		cg, pids := cgroups.Peers(m.cg, c.Pid)
		set := cgroupTasks{cgroups: cg}
		for _, tid := range processTasks(pids) {
			// A zombie is not worth moving (its counts are final); checked only for the
			// threads outside the group, the few on the timer's common path.
			if !in[tid] && !procfs.Finished(tid) {
				set.tids = append(set.tids, tid)
			}
		}
		if len(set.tids) > 0 {
			out = append(out, set)
		}
	}
	return out
}

func taskCount(sets []cgroupTasks) int {
	n := 0
	for _, s := range sets {
		n += len(s.tids)
	}
	return n
}

func holdsAny(in map[int]bool, cs []container.Container) bool {
	for _, c := range cs {
		if in[c.Pid] {
			return true
		}
	}
	return false
}

// reconcileGone handles an owned group none of whose containers is alive: its containers'
// departures never came, or it is idle. It goes once the retention window has passed.
func (m *Manager) reconcileGone(name string, o ReconcileOptions) (acts []Step, err error) {
	dryRun := o.DryRun
	err = m.store.Update(name, reconcileLockWait, func(tx *registry.Tx) error {
		if !tx.Owned {
			return nil
		}
		rec := tx.Rec
		act := func(what vocab.Action, detail string) {
			acts = append(acts, Step{Action: what, Group: rec.Path, Pod: rec.PodUID, Detail: detail})
		}
		for id := range rec.Containers {
			if initAlive(rec, id) {
				// Placed by its createRuntime hook and running, but not in its runtime's
				// state yet (runtimes write it after their hooks ran): not gone.
				return nil
			}
		}
		if len(rec.Containers) > 0 || rec.IdleSince == nil {
			ids := slices.Sorted(maps.Keys(rec.Containers))
			act(vocab.Idle, "no live container (gone without poststop: "+strings.Join(ids, ", ")+")")
			if dryRun {
				return nil
			}
			for _, id := range ids {
				if err := m.store.UnbindContainer(id); err != nil {
					return err
				}
			}
			now := m.now().UTC()
			tx.Rec.Containers, tx.Rec.Inits, tx.Rec.Cgroups, tx.Rec.IdleSince = map[string]time.Time{}, nil, nil, &now
			if err := tx.Save(); err != nil {
				return err
			}
		}
		gone := o.sandboxGone(rec)
		if !m.expired(tx.Rec) && !gone {
			return nil
		}
		why := "idle past the retention window"
		if gone {
			why = "its sandbox is gone from the runtime's pod list"
		}
		if dryRun {
			act(vocab.Removed, why)
			return nil
		}
		tx.Rec.SandboxEnded = tx.Rec.SandboxEnded || gone
		action, detail := m.remove(tx)
		if action == vocab.Removed && detail == "" {
			detail = why
		}
		act(action, detail)
		return nil
	})
	if errors.Is(err, registry.ErrLocked) {
		return []Step{busy(name, "")}, nil
	}
	return acts, err
}

// unbindDead forgets container bindings of containers that are not alive and in no record.
func (m *Manager) unbindDead(live []container.Container) error {
	alive := map[string]bool{}
	for _, c := range live {
		alive[c.ID] = true
	}
	ids, err := m.store.Containers()
	var errs []error
	for _, id := range ids {
		if alive[id] {
			continue
		}
		g, _ := m.store.ContainerGroup(id)
		if rec, ok, _ := m.store.Load(g); ok {
			if _, in := rec.Containers[id]; in {
				continue
			}
		}
		errs = append(errs, m.store.UnbindContainer(id))
	}
	return errors.Join(append(errs, err)...)
}

// sameRecord reports whether a save would change nothing that matters.
func sameRecord(a, b registry.Record) bool {
	if !a.Created.Equal(b.Created) || a.NRI != b.NRI || a.PodCgroup != b.PodCgroup || a.Pending != b.Pending || a.LateAssigned != b.LateAssigned || (a.IdleSince == nil) != (b.IdleSince == nil) ||
		a.RemoveFailed != b.RemoveFailed || len(a.Containers) != len(b.Containers) || !maps.Equal(a.Names, b.Names) {
		return false
	}
	for id := range a.Containers {
		if _, ok := b.Containers[id]; !ok {
			return false
		}
	}
	return true
}

// initAlive reports whether the init process recorded for a container still runs.
func initAlive(rec registry.Record, id string) bool {
	in, ok := rec.Inits[id]
	return ok && procfs.SameProcess(in.Pid, in.Start)
}
