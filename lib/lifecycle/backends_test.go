package lifecycle

import (
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
	"github.com/resctrl-mon/resctrl-mon/test/simenv"
)

// A decision test runs on both resctrls: the in-memory fake (test/resctrlfake), so that it
// runs wherever go test does, without root or FUSE, and the simulator, through real file
// operations, which skips without root. The test's body is the same; what it does to
// resctrl outside the Manager (a runtime's class, another tool's group, a remount, a fault,
// a switch of the counter assignment mode) and what it reads back (tasks, whether a group is
// there, its RMID, who holds counters) go through the env methods below, each saying how the
// fake stands for the simulator.
//
// Tests whose containers need a cgroup of their own (reconcile and a late placement find a
// container's processes by their cgroups) start them with e.hold: on the simulator in real
// cgroups (proctest.Hold, root only), on the fake in cgroups of a /proc of the test's own
// (proctest.FakeProc), which the fake's Manager reads in place of the host's. So every test
// here that runs on the simulator runs on the fake too, and without root: what only the
// simulator shows (a kernel that hangs, say) is tested by the front ends that meet it
// (hooks/hook, nri-adapter/nriplugin, lib/wrapper, test/e2e).

// tasks lists the thread ids in the tasks file at group: a monitoring group's, a class's
// own group's ("gold") or the root group's (""). The fake keeps no class's or root's list:
// there they are the test's own processes (e.proc) the fake says are there.
func (e *env) tasks(group string) []int {
	e.t.Helper()
	if e.sim != nil {
		tids, err := e.sim.Tasks(group)
		if err != nil {
			e.t.Fatalf("tasks of %s: %v", group, err)
		}
		return tids
	}
	if strings.Contains(group, "mon_groups/") {
		tids, ok := e.fake.Tasks(resctrlfake.At(group))
		if !ok {
			e.t.Fatalf("tasks of %s: no such group", group)
		}
		return slices.Sorted(maps.Keys(tids))
	}
	var out []int
	for _, p := range e.procs() {
		if e.fake.GroupOf(p) == group {
			out = append(out, p)
		}
	}
	return out
}

// backend is the env's resctrl as the test reads it back (simenv.Backend).
func (e *env) backend() simenv.Backend {
	limbo, _ := e.rs.(*resctrlfake.Limbo)
	return simenv.Backend{Sim: e.sim, Fake: e.fake, Limbo: limbo}
}

func (e *env) exists(group string) bool { return e.backend().Exists(group) }

func (e *env) rmid(group string) int { return e.backend().RMID(group) }

func (e *env) groupAssignment(group string) (resctrlfs.GroupAssignment, error) {
	return e.backend().GroupAssignment(group)
}

// setCounterState makes a counter of group read state (Unavailable, Error, Unassigned) in
// every domain from now on, as resctrlsim's SetCounterState: on the fake, the group's
// counters are fixed to what they read now with that one missing.
func (e *env) setCounterState(counter, state, group string) {
	e.t.Helper()
	if e.sim != nil {
		e.sim.SetCounterState(counter, state, group)
		return
	}
	readings, missing, err := e.fake.Counters(resctrlfake.At(group))
	if err != nil {
		e.t.Fatal(err)
	}
	var kept []resctrlfs.Reading
	for _, r := range readings {
		if r.Name == counter {
			missing = append(missing, resctrlfs.Missing{Domain: r.Domain, Name: r.Name, Reason: state})
			continue
		}
		kept = append(kept, r)
	}
	e.fake.SetCounters(group, kept, missing)
}

// mkClass makes an allocation class (a control group under the root). The fake has no
// class directories: a class is what its tasks are in (intoClass).
func (e *env) mkClass(class string) {
	e.t.Helper()
	if e.sim == nil {
		return
	}
	if err := os.Mkdir(filepath.Join(e.sim.Dir, class), 0o755); err != nil {
		e.t.Fatal(err)
	}
}

// intoClass writes pid into class's own tasks ("" the root: nothing to do), as runc does
// with linux.intelRdt.closID before createRuntime hooks run: one write, its leader only.
func (e *env) intoClass(class string, pid int) {
	e.t.Helper()
	switch {
	case class == "":
	case e.sim == nil:
		e.fake.JoinClass(pid, class)
	default:
		if err := os.WriteFile(filepath.Join(e.sim.Dir, class, "tasks"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
}

// mkdir makes the monitoring group at path as another tool (or an earlier process) does.
func (e *env) mkdir(group string) {
	e.t.Helper()
	if err := e.backend().Mkdir(group); err != nil {
		e.t.Fatal(err)
	}
}

// writeTask writes pid into group's tasks file, as another tool does.
func (e *env) writeTask(group string, pid int) {
	e.t.Helper()
	var err error
	if e.sim != nil {
		err = os.WriteFile(filepath.Join(e.sim.Dir, group, "tasks"), []byte(strconv.Itoa(pid)), 0o644)
	} else {
		err = e.fake.WriteTasks(resctrlfake.At(group), []int{pid}, func(_ int, err error) error { return err })
	}
	if err != nil {
		e.t.Fatal(err)
	}
}

// remount loses every group behind the Manager's back, as a re-mount of resctrl does.
func (e *env) remount() {
	if e.sim != nil {
		e.sim.Reset()
		return
	}
	e.fake.Remount()
}

// monGroups lists the names of the monitoring groups under the root group.
func (e *env) monGroups() []string {
	e.t.Helper()
	var out []string
	if e.sim != nil {
		es, err := os.ReadDir(filepath.Join(e.sim.Dir, "mon_groups"))
		if err != nil {
			e.t.Fatal(err)
		}
		for _, d := range es {
			out = append(out, d.Name())
		}
		return out
	}
	for _, p := range e.fake.GroupPaths() {
		if name, ok := strings.CutPrefix(p, "mon_groups/"); ok {
			out = append(out, name)
		}
	}
	return out
}

// otherManager is the Manager of another process on the same node and state dir (an
// uninstall, a reconcile): on the simulator one with its own goresctrl, which tracks none of
// the groups; on the fake one on the same fake.
func (e *env) otherManager() *Manager {
	e.t.Helper()
	var m *Manager
	var err error
	if e.sim != nil {
		m, err = New(e.cfg, slog.New(slog.DiscardHandler), kernel.Open)
	} else {
		m, err = NewWith(e.cfg, slog.New(slog.DiscardHandler), e.rs)
	}
	if err != nil {
		e.t.Fatal(err)
	}
	m.cg = e.m.cg // the same node's /proc
	return m
}

// procs lists the processes e.proc started.
func (e *env) procs() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.pids)
}

// assignment is info/L3_MON's counter assignment: the mode, the counters and those free.
func (e *env) assignment() (resctrlfs.Assignment, error) {
	if e.sim != nil {
		return resctrlfs.ReadAssignment(e.sim.Dir)
	}
	return e.fake.Assignment()
}

// switchAssignMode writes mode to info/L3_MON/mbm_assign_mode, as an operator does: to
// "default" every counter is freed, back to "mbm_event" none is assigned.
func (e *env) switchAssignMode(mode string) {
	e.t.Helper()
	if e.sim == nil {
		e.fake.SwitchMode(mode)
		return
	}
	if err := os.WriteFile(filepath.Join(e.sim.Dir, "info/L3_MON/mbm_assign_mode"), []byte(mode+"\n"), 0); err != nil {
		e.t.Fatal(err)
	}
}

// failAssignWrites makes the next n writes to any group's mbm_L3_assignments fail with
// errno, and returns the words the failure carries: "simulated fault in assign-write" on the
// simulator, "fake fault in assign-write" on the fake (each backend's FailNext).
func (e *env) failAssignWrites(n int, errno syscall.Errno) (says string) {
	if e.sim != nil {
		e.sim.FailNext(resctrlsim.OpAssignWrite, n, errno)
		return "simulated fault in " + string(resctrlsim.OpAssignWrite)
	}
	e.fake.FailNext(resctrlfake.OpAssignWrite, n, errno)
	return "fake fault in " + string(resctrlfake.OpAssignWrite)
}

// clearFaults makes every operation succeed again.
func (e *env) clearFaults() {
	if e.sim != nil {
		e.sim.ClearFaults()
		return
	}
	e.fake.ClearFaults()
}

// held is a container's init in a cgroup of its own (e.hold), with the children it forked:
// on the simulator a real cgroup (proctest.Hold), on the fake one of the env's /proc.
type held struct {
	Pid      int
	e        *env
	children int
	real     *proctest.Init
	fake     *proctest.FakeInit
}

// hold starts a container's init in a cgroup of its own, held before it runs (on the
// fake it is a sleep from the start: nothing reads what it runs), which forks children
// more processes once released. It is killed when the test ends.
func (e *env) hold(children int) *held {
	e.t.Helper()
	h := &held{e: e, children: children}
	if e.cgproc != nil {
		h.fake = e.cgproc.Hold(e.t, children)
		h.Pid = h.fake.Pid
		return h
	}
	workload := "sleep 600"
	if children > 0 {
		workload = "sh -c '" + strings.Repeat("sleep 600 & ", children) + "echo ready; wait'"
	}
	h.real = proctest.Hold(e.t, workload)
	h.Pid = h.real.Pid
	return h
}

// release lets the held init run its workload, and waits until it forked its children.
func (h *held) release() {
	h.e.t.Helper()
	if h.real == nil {
		return
	}
	h.real.Release(h.e.t)
	if h.children > 0 {
		h.real.WaitLine(h.e.t, "ready")
	}
}

// tasks lists every task in the init's cgroup.
func (h *held) tasks() []int {
	h.e.t.Helper()
	if h.real != nil {
		return h.real.Tasks(h.e.t)
	}
	return h.fake.Tasks(h.e.t)
}

// join moves another process (the test's, in no cgroup of its own) into the init's cgroup.
func (h *held) join(pid int) {
	h.e.t.Helper()
	if h.real != nil {
		joinCgroup(h.e.t, h.real.Cgroup, pid)
		return
	}
	h.fake.Join(h.e.t, pid)
}

// kill ends every process of the init's cgroup.
func (h *held) kill() {
	if h.real != nil {
		h.real.Kill()
		return
	}
	h.fake.Kill()
}

// cgroupsPath is the init's cgroup as a spec's linux.cgroupsPath names it.
func (h *held) cgroupsPath() string {
	if h.real != nil {
		return strings.TrimPrefix(h.real.Cgroup, "/sys/fs/cgroup/pids")
	}
	return h.fake.Cgroup
}
