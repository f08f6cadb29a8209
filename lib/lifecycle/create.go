package lifecycle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/intel/goresctrl/pkg/monitor"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/ocistate"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/lib/state"
)

// Create places a container that is being created (the createRuntime stage: its init is
// still held by the runtime) in its pod's group. The error says why it could not; the
// caller's failure policy decides whether the container may start anyway. A container that
// could not be placed for want of an RMID is recorded as pending either way.
func (m *Manager) Create(st specs.State) (out Outcome, err error) {
	out = Outcome{Container: st.ID}
	if st.Pid <= 0 {
		return out, fmt.Errorf("%w: createRuntime state has no pid (%d)", ErrBadInput, st.Pid)
	}
	idn, err := identity.FromAnnotations(st.ID, st.Annotations)
	if err != nil {
		m.recordFailure("identity", st.ID, err)
		return out, fmt.Errorf("%w: %w", ErrSpoofed, err)
	}
	out.Pod = idn.PodUID
	name, why := groupName(m.cfg, st.ID, idn, st.Annotations)
	if name == "" {
		out.Action, out.Detail = "skipped", why
		return out, nil
	}
	spec, err := m.bundleSpec(st)
	if err != nil {
		return out, err
	}
	if err := checkCgroup(st.Pid, spec); err != nil {
		return out, err
	}
	// A pid that is gone is bad input: find out before a group is made for it.
	if _, err := procfs.Threads(st.Pid); err != nil {
		return out, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	class := ocistate.ClosID(spec)
	out.Group = groupPath(class, name)

	created, err := m.reserve(st, idn, name, class, &out)
	if err != nil {
		return out, err
	}
	// The threads move outside the pod's lock: the container is in the record already, so
	// a concurrent last-stop keeps the group, and other containers of the pod need not wait.
	n, skipped, err := m.moveThreads(name, class, st.Pid)
	out.Threads = n
	if skipped > 0 {
		out.Detail = fmt.Sprintf("%d threads outside class %s left (they end at execve)", skipped, class)
	}
	if err != nil {
		m.recordFailure("assign", st.ID, err)
		return out, errors.Join(err, m.release(st.ID, name, created))
	}
	return out, nil
}

// reserve makes sure the pod's group exists and records the container in it, under the
// pod's lock. created is true when this call made the group.
func (m *Manager) reserve(st specs.State, idn identity.Identity, name, class string, out *Outcome) (created bool, err error) {
	lock, err := m.store.Lock(name, lockTimeout)
	if err != nil {
		return false, err
	}
	defer func() { err = errors.Join(err, lock.Unlock()) }()

	rec, owned, err := m.store.Load(name)
	if err != nil {
		return false, err
	}
	if owned && m.expired(rec) {
		// Idle past the retention window: the pod's old life is over and its counts are
		// final. A new group makes sure nothing of the old one is carried over.
		if action, detail := m.remove(rec); action != "removed" {
			return false, fmt.Errorf("the expired group %s of this pod could not be removed: %s", rec.Path, detail)
		}
		owned = false
	}
	if !owned {
		rec = state.Record{Group: name, Path: out.Group, Class: class, PodUID: idn.PodUID, Namespace: idn.Namespace,
			PodName: idn.PodName, SandboxID: idn.SandboxID, Created: m.now().UTC()}
	}
	if err := m.admit(&rec, owned, idn, class); err != nil {
		return false, err
	}
	// The container is in the record before mkdir: a hook killed between mkdir and the
	// tasks write then leaves a group reconcile knows is ours (and completes or removes),
	// not an unprovable orphan holding an RMID forever.
	rec.Containers[st.ID] = m.now().UTC()
	recordInit(&rec, st.ID, st.Pid)
	rec.IdleSince = nil
	if err := errors.Join(m.store.Save(rec), m.store.BindContainer(st.ID, name)); err != nil {
		return false, err
	}
	created, err = m.ensureGroup(&rec, owned)
	if err != nil {
		switch {
		case errors.Is(err, ErrNoRMIDs):
			// Remember the pod so a later call or reconcile completes it.
			rec.Pending = err.Error()
			err = errors.Join(err, m.store.Save(rec))
			out.Action = "pending"
		case !owned:
			// Not ours after all (a foreign group, a failed mkdir): drop the claim.
			err = errors.Join(err, m.store.Delete(name), m.store.UnbindContainer(st.ID))
		default:
			delete(rec.Containers, st.ID)
			delete(rec.Inits, st.ID)
			err = errors.Join(err, m.store.Save(rec), m.store.UnbindContainer(st.ID))
		}
		m.recordFailure("create", st.ID, err)
		return false, err
	}
	out.Action = "joined"
	if created {
		out.Action = "created"
		m.writeSnapshot(rec, snapshot.Begin)
	}
	if rec.Pending != "" {
		rec.Pending = ""
		return created, m.store.Save(rec)
	}
	return created, nil
}

// release takes back a reservation whose threads could not be moved, and removes the group
// if this call made it and nothing else joined.
func (m *Manager) release(id, name string, created bool) (err error) {
	lock, err := m.store.Lock(name, lockTimeout)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, lock.Unlock()) }()
	rec, owned, err := m.store.Load(name)
	if err != nil || !owned {
		return err
	}
	delete(rec.Containers, id)
	delete(rec.Inits, id)
	if err := m.store.UnbindContainer(id); err != nil {
		return err
	}
	if created && len(rec.Containers) == 0 {
		// Leave no empty group behind for a container that will not run in it.
		m.removeEmpty(rec)
		return nil
	}
	return m.store.Save(rec)
}

// admit decides whether the container may join an existing record: same allocation class,
// same live sandbox.
func (m *Manager) admit(rec *state.Record, owned bool, idn identity.Identity, class string) error {
	if rec.Containers == nil {
		rec.Containers = map[string]time.Time{}
	}
	if !owned {
		return nil
	}
	if rec.Class != class {
		return fmt.Errorf("%w: the pod's group is under class %q, this container runs in %q; a group cannot span classes",
			ErrClassMismatch, classLabel(rec.Class), classLabel(class))
	}
	if idn.SandboxID != "" && rec.SandboxID != "" && idn.SandboxID != rec.SandboxID {
		if !rec.SandboxEnded {
			err := fmt.Errorf("%w: pod %s is bound to sandbox %.12s, the container claims sandbox %.12s", ErrSpoofed, rec.Group, rec.SandboxID, idn.SandboxID)
			m.recordFailure("identity", rec.Group, err)
			return err
		}
		// kubelet recreated the pod's sandbox under the same UID: the group stays the pod's.
		rec.SandboxID, rec.SandboxEnded = idn.SandboxID, false
	}
	return nil
}

// ensureGroup makes the group (or checks it is still there). created is true when this call
// allocated its RMID.
func (m *Manager) ensureGroup(rec *state.Record, owned bool) (created bool, err error) {
	dir := filepath.Join(m.cfg.ResctrlRoot, rec.Path)
	_, statErr := os.Stat(dir)
	existed := statErr == nil
	if existed && !owned {
		return false, fmt.Errorf("%w: %s", ErrForeign, dir)
	}
	if _, err := m.mon.EnsureGroup(rec.Group, rec.Class); err != nil {
		if errors.Is(err, monitor.ErrNoRMIDs) || errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.ENOSPC) {
			return false, fmt.Errorf("%w for %s: %s", ErrNoRMIDs, rec.Path, m.kernelSays())
		}
		return false, fmt.Errorf("create %s: %w%s", rec.Path, err, m.kernelSaysSuffix())
	}
	return !existed, nil
}

// moveThreads moves every thread of the container's init into the group. The runtime's
// init is a multi-threaded Go (runc) or C program held before execve; only the thread that
// calls execve survives it, keeping its own RMID, and whatever it forks inherits that. A
// thread that exited meanwhile is no loss.
//
// In an allocation class, runc moved only the init's leader into the class (a tasks write
// moves one thread), so the kernel refuses its other threads for the class's group (EINVAL).
// They die at execve, which the leader makes (runc locks it to the main thread), so they
// are skipped; the leader itself must be placed.
func (m *Manager) moveThreads(name, class string, pid int) (moved, skipped int, err error) {
	group, classed := groupPath(class, name), class != ""
	tids, err := procfs.Threads(pid)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	// The leader first, through goresctrl and its class check: its failure is the one that
	// matters.
	if err := m.assignOne(name, pid, classed, pid, &moved, &skipped); err != nil {
		if errors.Is(err, syscall.EINVAL) && !errors.Is(err, ErrClassMismatch) {
			// The kernel moves a task into a monitoring group only from the group's own
			// class: the init is not where the container's spec says it is.
			err = fmt.Errorf("%w: the container's init is not in the allocation class its spec names, %s, where its group is "+
				"(did the runtime apply linux.intelRdt?): %w", ErrClassMismatch, classLabel(class), err)
		}
		return moved, skipped, err
	}
	siblings := slices.DeleteFunc(tids, func(t int) bool { return t == pid })
	if len(siblings) > 0 {
		// The leader's threads are in its class, or (in a class) refused by the kernel for
		// the group, so goresctrl's class check, which lists the resctrl root each time,
		// has nothing to add for them: they go through one open tasks file. For runc's
		// init, with its half-dozen threads, this was most of the hook's resctrl traffic.
		err = m.writeTasks(filepath.Join(m.cfg.ResctrlRoot, group, "tasks"), siblings, func(tid int, err error) error {
			return m.assignResult(name, tid, classed, pid, err, &moved, &skipped)
		})
		if err != nil {
			return moved, skipped, err
		}
	}
	if moved == 0 {
		return 0, skipped, fmt.Errorf("%w: pid %d has no thread left to move", ErrBadInput, pid)
	}
	return moved, skipped, nil
}

func (m *Manager) bundleSpec(st specs.State) (*specs.Spec, error) {
	if st.Bundle == "" {
		return nil, nil
	}
	spec, err := ocistate.ReadSpec(st.Bundle)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return spec, nil
}

func (m *Manager) kernelSays() string { return resctrlfs.LastCmdStatus(m.cfg.ResctrlRoot) }

func (m *Manager) kernelSaysSuffix() string {
	if s := m.kernelSays(); s != "" && s != "ok" {
		return " (resctrl: " + s + ")"
	}
	return ""
}

func groupPath(class, name string) string {
	if class == "" {
		return filepath.Join("mon_groups", name)
	}
	return filepath.Join(class, "mon_groups", name)
}

func classLabel(c string) string {
	if c == "" {
		return "(root)"
	}
	return c
}

// recordInit remembers the container's init by pid and start time.
func recordInit(rec *state.Record, id string, pid int) {
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return
	}
	if rec.Inits == nil {
		rec.Inits = map[string]state.Init{}
	}
	rec.Inits[id] = state.Init{Pid: pid, Start: st.StartTime}
}

// assign writes each task to the group's tasks (goresctrl's AssignPID: one id per write,
// with its class check), for tasks of any processes (reconcile). A task that exited is no
// loss. In an allocation class the kernel refuses tasks that are not in the class (EINVAL);
// all but leader are then skipped and counted, since only the leader must be placed.
func (m *Manager) assign(name string, tids []int, classed bool, leader int) (moved, skipped int, err error) {
	for _, tid := range tids {
		if err := m.assignOne(name, tid, classed, leader, &moved, &skipped); err != nil {
			return moved, skipped, err
		}
	}
	return moved, skipped, nil
}

func (m *Manager) assignOne(name string, tid int, classed bool, leader int, moved, skipped *int) error {
	return m.assignResult(name, tid, classed, leader, m.mon.AssignPID(name, tid), moved, skipped)
}

// assignResult counts one task's move, or says why it matters that it failed.
func (m *Manager) assignResult(name string, tid int, classed bool, leader int, err error, moved, skipped *int) error {
	switch {
	case err == nil:
		*moved++
	case errors.Is(err, syscall.ESRCH), errors.Is(err, os.ErrNotExist):
	case classed && tid != leader && errors.Is(err, syscall.EINVAL):
		*skipped++
	case errors.Is(err, monitor.ErrClassMismatch):
		return fmt.Errorf("%w: %w", ErrClassMismatch, err)
	default:
		return fmt.Errorf("move thread %d into %s: %w%s", tid, name, err, m.kernelSaysSuffix())
	}
	return nil
}

// writeTasks writes ids to a tasks file through one open file, one id per write(2) as the
// kernel reads them, and hands each write's result to result, which may stop the loop.
func (m *Manager) writeTasks(path string, ids []int, result func(id int, err error) error) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w%s", path, err, m.kernelSaysSuffix())
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	buf := make([]byte, 0, 24)
	for _, id := range ids {
		buf = append(strconv.AppendInt(buf[:0], int64(id), 10), '\n')
		_, werr := f.Write(buf)
		if err := result(id, werr); err != nil {
			return err
		}
	}
	return nil
}
