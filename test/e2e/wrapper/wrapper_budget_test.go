package wrapper_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	budgetpkg "github.com/resctrl-mon/resctrl-mon/lib/budget"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// execMargin is what `runc exec` through the wrapper may take past the wrapper's budget: the
// runtime's own exec (tens of milliseconds alone, more on a loaded machine), never another
// resctrl write's latency.
const execMargin = time.Second

// The wrapper's promise for exec under a slow resctrl, swept: whatever the latency of a
// tasks write and whatever the budget, `runc exec` through the wrapper ends within the
// budget (plus the runtime's own time); fail-open runs the process, placed when the write
// fitted in the budget, else with a line saying the budget ran out; fail-closed runs it placed
// or refuses it saying the budget ran out.
//
// A write the kernel has begun is not abandoned (FUSE, the simulator, waits for its answer;
// the kernel's rdtgroup mutex is taken uninterruptibly), and execve of a process first ends
// its other threads: a write left in flight on one of the wrapper's threads held the exec
// until the write was done, the whole latency, whatever the budget.
func TestWrapperExecBudgetSweep(t *testing.T) {
	t.Parallel()
	// No latency close to a budget's wait (the budget less its tail, kept for the log line):
	// which side of it a write ends on would be chance.
	latencies := []time.Duration{100 * time.Millisecond, time.Second, 2200 * time.Millisecond, 5 * time.Second}
	budgets := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	// In the environment of this test's wrappers (and what they start), so that waiting for
	// them ignores other tests' (not RESCTRL_MON_: the config takes those for settings).
	mark := fmt.Sprintf("E2E_WRAPPER_SWEEP=%d-%d", os.Getpid(), time.Now().UnixNano())
	type sweepEnv struct {
		*e2e.HookEnv
		w      wrapped
		lat    time.Duration
		points []*execPoint
	}
	// One simulator per latency, one pod per point (its own tasks file: writes to one file
	// wait for each other in the kernel), the simulators at once, each one's points in turn.
	var envs []*sweepEnv
	for _, lat := range latencies {
		e := &sweepEnv{HookEnv: e2e.NewHookEnv(t, resctrlsim.Options{}, ""), lat: lat}
		e.w = newWrapped(t, e.HookEnv, "")
		for i, budget := range budgets {
			for j, policy := range []string{"open", "closed"} {
				n := 2*i + j + 1
				p := &execPoint{name: fmt.Sprintf("tasks-write=%s budget=%s %s", lat, budget, policy), id: fmt.Sprintf("b%s-%s", budget, policy),
					group: "mon_groups/" + execUID(n), budget: budget, policy: policy, late: lat > budget-budgetpkg.Tail(budget)}
				b := e.Bundle(e2e.CRIOPod(execUID(n), e2e.SandboxOf("0123456789abcdef"[n]), p.id), "sleep", "600")
				if err := e.w.plain.Run(p.id, b); err != nil {
					t.Fatalf("%s: %v\n%s", p.name, err, e.Log())
				}
				p.via = e.w.plain.Via(e2e.Binaries.Wrapper, config.ConfigEnv+"="+e.CfgPath, mark,
					config.EnvName("hookBudget")+"="+budget.String(), config.EnvName("failurePolicy")+"="+policy)
				e.points = append(e.points, p)
			}
		}
		envs = append(envs, e)
	}
	var wg sync.WaitGroup
	for _, e := range envs {
		e.Sim.SetLatency(resctrlsim.OpTasksWrite, e.lat)
		wg.Go(func() {
			for _, p := range e.points {
				p.run(t, e.HookEnv)
			}
		})
	}
	wg.Wait()
	// The writes still in flight end before the simulators go.
	for _, e := range envs {
		e.Sim.SetLatency(resctrlsim.OpTasksWrite, 0)
	}
	e2e.WaitNoProcess(t, e2e.Binaries.Wrapper, mark)
	for _, e := range envs {
		for _, p := range e.points {
			if !p.late {
				continue
			}
			if p.policy == "open" && e.LogLines("prog=resctrl-mon-runtime", "command=exec", "container="+p.id+" ", "time budget exhausted") != 1 {
				t.Errorf("%s: the log does not say the exec ran unplaced because the budget ran out:\n%s", p.name, e.Log())
			}
			if e.LogLines("prog=resctrl-mon-runtime", "join ended after its budget", "container="+p.id+" ") != 1 {
				t.Errorf("%s: the log does not say how the write left behind ended:\n%s", p.name, e.Log())
			}
		}
	}
}

// execPoint is one exec of the sweep: into its own pod's container, with its budget and policy.
type execPoint struct {
	name, id, group, policy string
	budget                  time.Duration
	late                    bool // the write takes longer than the budget's wait
	via                     *e2e.Runtime
}

// run execs a process into the point's container through the wrapper and checks the promise.
// It runs on a goroutine of its own: it reports with t.Errorf only.
func (p *execPoint) run(t *testing.T, e *e2e.HookEnv) {
	out := filepath.Join(e.Dir, p.id+".exec.out")
	start := time.Now()
	pid, err := p.via.Exec(p.id, out, "sleep", "600")
	took := time.Since(start)
	t.Logf("%s: runc exec through the wrapper: %s (%v)", p.name, took.Round(time.Millisecond), err)
	if took > p.budget+execMargin {
		t.Errorf("%s: runc exec through the wrapper took %s, past the budget %s and the runtime's own %s",
			p.name, took.Round(time.Millisecond), p.budget, execMargin)
	}
	switch {
	case !p.late && err != nil:
		t.Errorf("%s: the write fits in the budget, yet the exec failed: %v\n%s", p.name, err, e.LogFor(p.id))
	case !p.late:
		err := poll.Until(5*time.Second, func() error {
			tids, err := e.Sim.Tasks(p.group)
			if err != nil || !slices.Contains(tids, pid) {
				return fmt.Errorf("exec'd pid %d not in %s (%v): %w", pid, p.group, tids, err)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v\n%s", p.name, err, e.LogFor(p.id))
		}
	case p.policy == "open" && err != nil:
		t.Errorf("%s: fail-open: the exec did not run: %v\n%s", p.name, err, e.LogFor(p.id))
	case p.policy == "open":
	case err == nil:
		t.Errorf("%s: fail-closed: the exec ran although the write could not end within the budget", p.name)
	case !strings.Contains(err.Error(), "failurePolicy: closed") || !strings.Contains(err.Error(), "time budget exhausted"):
		t.Errorf("%s: fail-closed: refused without saying the budget ran out: %v", p.name, err)
	}
}

func execUID(n int) string { return fmt.Sprintf("5bee7e00-0000-4000-8000-%012x", n) }
