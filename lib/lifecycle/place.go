package lifecycle

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// Placement is a container about to run, as any front end knows it: the OCI hook at
// createRuntime, the NRI adapter at StartContainer. Its init (Pid) is created and held by
// the runtime; nothing of the container has run yet.
type Placement struct {
	ContainerID string
	Pid         int // the init's host pid
	// Pod is who the container is, established by the front end from what its runtime
	// itself set (the hook: the runtime's annotations; NRI: the PodSandbox it sends).
	Pod identity.Identity
	// Annotations are the container's (and for NRI its pod's) annotations, for the
	// opt-in/opt-out filters only; identity never comes from them here.
	Annotations map[string]string
	// Class is the allocation class (CLOS) the runtime put the container in, "" for none.
	Class string
	// Cgroup is the init's cgroup v2 path when the front end has read it already (the hook
	// reads /proc/<pid>/cgroup for its own check); "" makes Place read it.
	Cgroup string
	// PodCgroup is the pod's cgroup as the runtime named it (NRI: the sandbox's cgroup
	// parent; the hook: identity.PodCgroup of the spec's cgroupsPath), a cgroupfs path or a
	// systemd slice name; "" when it named none. It is recorded as the pod's only if it is
	// the parent of the container's cgroup.
	PodCgroup string
	// CgroupsPath is the container's cgroup as its runtime named it (the spec's
	// linux.cgroupsPath, NRI's Linux.CgroupsPath); "" skips that check. Place checks the init
	// is there, and still the process it read first, right before it moves anything: the
	// front end checked the pid when its event came, but the pod's lock may keep Place
	// waiting (up to lockTimeout) before the write, time enough for the init to exit and its
	// pid to go to another pod's process.
	CgroupsPath string
	// Late says the container has already run: its runtime gave no pid before it started
	// (NRI's PostStartContainer fallback, CRI-O before 1.36). Every task of its cgroup is
	// moved, not just the init's threads, and the pod is marked late-assigned: what they
	// did until now was counted elsewhere.
	Late bool
	// RuntimeGroup says the runtime made a monitoring group of its own for the container,
	// <Class>/mon_groups/<ContainerID>, and put the init in it (the spec's
	// linux.intelRdt.enableMonitoring, runc ≥ 1.4): Place removes it once the container is in
	// its own group, so that one container never holds two RMIDs (see runtimegroup.go).
	RuntimeGroup bool
}

// Place puts a container in its pod's group: the group is made (one RMID for the pod's
// life) if the pod has none, and every thread of the init is moved into it, so everything
// the container runs or forks is counted there. The error says why it could not; the
// front end's failure policy decides whether the container may start anyway. A container
// that could not be placed for want of an RMID is recorded as pending either way.
//
// A pod's sandbox (infra, pause) process is never placed: CRI-O runs no hooks for it and NRI
// gives it no StartContainer, so the rule is the same everywhere, and its idle pause
// costs nobody anything.
func (m *Manager) Place(p Placement) (out Outcome, err error) {
	defer func() { m.count(ActionOf(out, err)) }()
	out = Outcome{Container: p.ContainerID, Pod: p.Pod.PodUID}
	if p.Pid <= 0 {
		return out, fmt.Errorf("%w: no init pid (%d)", ErrBadInput, p.Pid)
	}
	if p.Pod.Sandbox {
		out.Action, out.Detail = vocab.Skipped, "a pod's sandbox (infra) process is never in its group"
		return out, nil
	}
	name, why := groupName(m.cfg, p.ContainerID, p.Pod, p.Annotations)
	if name == "" {
		out.Action, out.Detail = vocab.Skipped, why
		return out, nil
	}
	if a := optOutRefused(m.cfg, p.Pod, p.Annotations); a != "" {
		m.annotationRefused(p, a)
	}
	if out.Pod == "" {
		out.Pod = name
	}
	// A pid that is gone is bad input: find out before a group is made for it. Its start
	// time, read once here, identifies the init in the record.
	st, err := procfs.ReadStat(p.Pid)
	if err != nil {
		return out, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	out.Group = GroupPath(p.Class, name)
	created, err := m.reserve(p, name, st, &out)
	if err != nil {
		return out, err
	}
	if err := m.stillInit(p, st); err != nil {
		m.recordFailure(vocab.FailIdentity, p.ContainerID, out.Pod, err)
		return out, errors.Join(fmt.Errorf("%w: %w", ErrSpoofed, err), m.release(p.ContainerID, name, created))
	}
	// The threads move outside the pod's lock: the container is in the record already, so
	// a concurrent last-stop keeps the group, and other containers of the pod need not wait.
	// The kernel refuses a thread of another class; goresctrl's check only names the class,
	// once the kernel has refused the leader: see moveThreads.
	n, skipped, err := m.moveThreads(resctrlfs.Addr{Class: p.Class, Name: name}, p.Pid)
	out.Threads = n
	if skipped > 0 {
		out.Detail = fmt.Sprintf("%d threads outside class %s left (they end at execve)", skipped, p.Class)
	}
	if err == nil && p.Late {
		var late int
		late, err = m.placeLate(name, p)
		out.Threads += late
	}
	if err != nil {
		m.recordFailure(vocab.FailAssign, p.ContainerID, out.Pod, err)
		return out, errors.Join(err, m.release(p.ContainerID, name, created))
	}
	if p.RuntimeGroup {
		m.dropRuntimeGroup(p, &out)
	}
	return out, nil
}

// stillInit makes sure, right before the write, that the pid is still the init the placement
// began with: in the container's cgroup (when the front end named it), and the process whose
// start time st was read first. A pid whose process exited while Place waited for the pod's
// lock may be another pod's process now, which (late: with every task of its cgroup) would be
// moved here and pin this group's RMID. The cgroup is read before the start time, so the
// process found in the cgroup is the one whose start time matches. What is left is the
// kernel's: it resolves the pid at the write itself.
func (m *Manager) stillInit(p Placement, st procfs.Stat) error {
	if p.CgroupsPath != "" {
		if _, err := m.cg.Check(p.Pid, p.CgroupsPath); err != nil {
			return fmt.Errorf("right before it was placed: %w", err)
		}
	}
	if !procfs.SameProcess(p.Pid, st.StartTime) {
		return fmt.Errorf("pid %d is no longer the process it was when the placement began (started at tick %d): it exited, "+
			"or the pid went to another process", p.Pid, st.StartTime)
	}
	return nil
}

// placeLate moves every task of a started container's cgroup into its group: the init has
// forked and exec'd by now, and its children run outside the group.
func (m *Manager) placeLate(name string, p Placement) (int, error) {
	g := resctrlfs.Addr{Class: p.Class, Name: name}
	cgroups, err := m.cg.Index()
	if err != nil {
		return 0, err
	}
	cg, pids := cgroups.Peers(m.cg, p.Pid)
	tids := slices.DeleteFunc(processTasks(pids), func(t int) bool { return t == p.Pid })
	return m.assignIn(g, []cgroupTasks{{cg, tids}})
}

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

// placeRecorded moves every task of the record's other live containers into the group
// (every thread of every process in each container's cgroups) and marks the pod
// late-assigned: what they did until now was counted elsewhere.
func (m *Manager) placeRecorded(tx *registry.Tx, except string) (moved int, err error) {
	var others []int
	for id, in := range tx.Rec.Inits {
		if id != except && procfs.SameProcess(in.Pid, in.Start) {
			others = append(others, in.Pid)
		}
	}
	if len(others) == 0 {
		return 0, nil
	}
	tx.Rec.LateAssigned = true
	cgroups, err := m.cg.Index()
	if err != nil {
		return 0, err
	}
	var sets []cgroupTasks
	for _, pid := range others {
		cg, pids := cgroups.Peers(m.cg, pid)
		sets = append(sets, cgroupTasks{cg, processTasks(pids)})
	}
	return m.assignIn(addrOf(tx.Rec), sets)
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

// moveThreads moves every thread of the container's init into the group, before it runs
// (see the package comment of resctrlfs, "Tasks"). A thread that exited meanwhile is no loss.
// In an allocation class the init's other threads are refused and skipped, the leader must
// be placed (runc locks it to the main thread, which makes the execve; "Classes").
//
// Every thread, the leader first, goes through one open tasks file: the kernel's own refusal
// (EINVAL) is the class check. goresctrl's AssignPID checks the class before it writes, by
// listing the resctrl root and reading every class's tasks (on a node, each such read walks
// every thread of the node); that check only adds words, the class the init is in, so it
// runs only once the kernel has refused the leader.
func (m *Manager) moveThreads(g resctrlfs.Addr, pid int) (moved, skipped int, err error) {
	name, class := g.Name, g.Class
	classed := class != ""
	tids, err := procfs.Threads(pid)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	// The leader first: its failure is the one that matters.
	leader := func(err error) error {
		if errors.Is(err, syscall.EINVAL) {
			// goresctrl's check names the class the init is in (or, if the init moved
			// meanwhile, places it).
			err = m.rs.Assign(g, pid)
		}
		err = m.assignResult(name, pid, classed, pid, err, &moved, &skipped)
		if errors.Is(err, syscall.EINVAL) && !errors.Is(err, resctrlfs.ErrClassMismatch) {
			// The kernel moves a task into a monitoring group only from the group's own
			// class: the init is not where the container's spec says it is.
			err = fmt.Errorf("%w: the container's init is not in the allocation class its spec names, %s, where its group is "+
				"(did the runtime apply linux.intelRdt?): %w", resctrlfs.ErrClassMismatch, ClassLabel(class), err)
		}
		return err
	}
	ids := append([]int{pid}, slices.DeleteFunc(tids, func(t int) bool { return t == pid })...)
	err = m.rs.WriteTasks(g, ids, func(tid int, err error) error {
		if tid == pid {
			return leader(err)
		}
		return m.assignResult(name, tid, classed, pid, err, &moved, &skipped)
	})
	if err != nil {
		return moved, skipped, err
	}
	if moved == 0 {
		return 0, skipped, fmt.Errorf("%w: pid %d has no thread left to move", ErrBadInput, pid)
	}
	return moved, skipped, nil
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

// cgroupTasks are threads found in a container's cgroups through an index read earlier,
// with those cgroups (a /proc/<pid>/cgroup text).
type cgroupTasks struct {
	cgroups string
	tids    []int
}

// assignIn writes each task to the group's tasks (goresctrl's AssignPID, with its class
// check), for tasks found through a cgroup index (reconcile, a pending pod's completion):
// each is written only if it is still in its container's cgroups right before its write. A
// task that exited is no loss; in an allocation class the tasks outside it are refused and
// skipped (see the package comment of resctrlfs, "Classes"). The index was read before a lock
// wait (reconcile waits up to reconcileLockWait for a pod a hook works on), and a pid that
// exited meanwhile may be another pod's process now.
func (m *Manager) assignIn(g resctrlfs.Addr, sets []cgroupTasks) (moved int, err error) {
	var skipped int
	classed := g.Class != ""
	for _, s := range sets {
		for _, tid := range s.tids {
			if !m.cg.Still(tid, s.cgroups) {
				continue
			}
			if err := m.assignResult(g.Name, tid, classed, 0, m.rs.Assign(g, tid), &moved, &skipped); err != nil {
				return moved, err
			}
		}
	}
	return moved, nil
}

// assignResult counts one task's move, or says why it matters that it failed.
func (m *Manager) assignResult(name string, tid int, classed bool, leader int, err error, moved, skipped *int) error {
	switch {
	case err == nil:
		*moved++
	case errors.Is(err, syscall.ESRCH), errors.Is(err, os.ErrNotExist):
	case classed && tid != leader && errors.Is(err, syscall.EINVAL):
		*skipped++
	case errors.Is(err, resctrlfs.ErrClassMismatch):
		return err
	default:
		return fmt.Errorf("move thread %d into %s: %w%s", tid, name, err, m.kernelSaysSuffix())
	}
	return nil
}

// processTasks lists every thread of the given processes.
func processTasks(pids []int) []int {
	var out []int
	for _, p := range pids {
		tids, _ := procfs.Threads(p)
		out = append(out, tids...)
	}
	return out
}

// GroupOf is the group a placement goes to ("" when it is not monitored): for a front end
// that must act on the pod when a placement could not finish (the hook's budget).
func (m *Manager) GroupOf(p Placement) string {
	if p.Pod.Sandbox {
		return ""
	}
	name, _ := groupName(m.cfg, p.ContainerID, p.Pod, p.Annotations)
	return name
}

// MarkLate records that a container's placement did not finish in time (its front end gave
// up: the hook's budget ran out): whatever the container ran before reconcile completes it
// was counted elsewhere, so the pod is late-assigned. It needs the state dir only, not
// resctrl: the hook calls it when resctrl is what is slow. It waits at most wait for the
// pod's lock: a placement stuck inside the lock has moved nothing, and reconcile, or the
// placement when it ends, marks the pod late.
func MarkLate(stateDir, group, containerID string, wait time.Duration) error {
	store, err := registry.Open(stateDir)
	if err != nil {
		return err
	}
	return store.Update(group, wait, func(tx *registry.Tx) error {
		if _, in := tx.Rec.Containers[containerID]; !tx.Owned || !in || tx.Rec.LateAssigned {
			return nil
		}
		tx.Rec.LateAssigned = true
		return tx.Save()
	})
}
