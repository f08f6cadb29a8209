package lifecycle

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"

	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

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
