package nriplugin

import (
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
	"github.com/resctrl-mon/resctrl-mon/test/simenv"
)

// An adapter test runs on both resctrls, as lifecycle's decision tests do: the in-memory
// fake (test/resctrlfake), given to the adapter with NewWith, so that it runs wherever go
// test does, without root or FUSE, and the simulator, through real file operations, which
// skips without root. The test's body is the same; what it reads back from resctrl (tasks,
// whether a group is there, its RMID, its counters) and the other front ends it runs beside
// (the hook's manager) go through the env methods below, each saying how the fake stands for
// the simulator.
//
// Tests whose containers need a cgroup of their own (proctest.Hold: the adapter checks an
// init against its container's cgroup, and a late placement moves the whole cgroup) skip on
// both without root: the fake stands for resctrl, not for the cgroup hierarchy. Tests of
// what only the simulator has stay on it alone:
//   - a task born of a task in a group is in that group: the fake knows only the tasks
//     written to it, so a container placed before it forks (TestPodLifecycle,
//     TestNoPidInitFromItsCgroup, TestHookAndAdapterPlaceOnce, TestRestartAndMissedEvents:
//     the forker's threads) is checked on the simulator;
//   - a kernel that hangs (SetLatency: TestBudget);
//   - resctrl read as files by another process or package: the adapter's binary launched by
//     the runtime (TestPreRegistered), the status inventory (TestBesideHooks).

// newEnvFunc builds a test's env with the simulator's options and an edit of the config.
type newEnvFunc func(t *testing.T, o resctrlsim.Options, edit func(*config.Config)) *env

// onBoth runs body as two parallel subtests, "fake" and "sim", its newEnv on the fake and
// on the simulator.
func onBoth(t *testing.T, body func(t *testing.T, newEnv newEnvFunc)) {
	t.Helper()
	simenv.Both[newEnvFunc](t, newFakeEnvLike, newEnvSim, body)
}

// newFakeEnvLike is newEnvSim's env on the fake, set up as the simulator with the same
// options would be (simenv.Fake: RMIDs, L3 domains, counter assignment; what it does not
// model fails the test, which then runs on the simulator only), and a resctrlRoot that is
// none (nothing may open it: the adapter is given the fake).
func newFakeEnvLike(t *testing.T, o resctrlsim.Options, edit func(*config.Config)) *env {
	t.Helper()
	fe := simenv.Fake(t, o)
	e := &env{t: t, fake: fe.Fake, rs: fe.Groups, cfg: fe.Config}
	e.setUp(edit)
	return e
}

// newPlugin is the adapter on the env's resctrl: New on the simulator (it opens
// cfg.ResctrlRoot), NewWith on the fake.
func (e *env) newPlugin(cfg config.Config, log *slog.Logger) (*Plugin, error) {
	if e.sim != nil {
		return New(cfg, log, kernel.Open)
	}
	return NewWith(cfg, log, e.rs)
}

// manager opens the state the adapter and the hook share, as another front end would: on
// the simulator with a goresctrl of its own, which tracks none of the groups; on the fake on
// the same fake (which remembers the names every manager on it made).
func (e *env) manager() *lifecycle.Manager {
	e.t.Helper()
	var m *lifecycle.Manager
	var err error
	if e.sim != nil {
		m, err = lifecycle.New(e.cfg, discard(), kernel.Open)
	} else {
		m, err = lifecycle.NewWith(e.cfg, discard(), e.rs)
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// backend is the env's resctrl as the test reads it back (simenv.Backend).
func (e *env) backend() simenv.Backend { return simenv.Backend{Sim: e.sim, Fake: e.fake} }

// mkdir makes the monitoring group at path as another tool does.
func (e *env) mkdir(group string) {
	e.t.Helper()
	if err := e.backend().Mkdir(group); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) exists(group string) bool { return e.backend().Exists(group) }

// tasks lists the thread ids in the tasks file at group: a monitoring group's or the root
// group's (""). The fake keeps no root list: there it is every thread of the host the fake
// holds in no group, as the simulator lists the root's from /proc.
func (e *env) tasks(group string) []int {
	e.t.Helper()
	if e.sim != nil {
		tids, err := e.sim.Tasks(group)
		if err != nil {
			e.t.Fatalf("tasks of %s: %v", group, err)
		}
		return tids
	}
	if group != "" {
		tids, ok := e.fake.Tasks(resctrlfake.At(group))
		if !ok {
			e.t.Fatalf("tasks of %s: no such group", group)
		}
		return slices.Sorted(maps.Keys(tids))
	}
	var out []int
	for _, tid := range hostThreads(e.t) {
		if e.fake.GroupOf(tid) == "" {
			out = append(out, tid)
		}
	}
	return out
}

// hostThreads lists every thread of every process in /proc, sorted.
func hostThreads(t *testing.T) []int {
	t.Helper()
	es, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, d := range es {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		tids, err := procfs.Threads(pid)
		if err != nil {
			continue // it exited while we looked
		}
		out = append(out, tids...)
	}
	slices.Sort(out)
	return out
}

func (e *env) rmid(group string) int { return e.backend().RMID(group) }

func (e *env) groupAssignment(group string) (resctrlfs.GroupAssignment, error) {
	return e.backend().GroupAssignment(group)
}
