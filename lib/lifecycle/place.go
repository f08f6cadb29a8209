package lifecycle

import (
	"errors"
	"fmt"
	"slices"
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
