package hook_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// The hook's promise under a slow resctrl, swept: whatever the latency of a mkdir or of a
// tasks write, and whatever the budget, runc never kills the hook (installed as make install
// does, its timeout 2 s past the budget), fail-open always starts the container and
// fail-closed either starts it placed or refuses it saying the budget ran out. Afterwards,
// resctrl fast again, reconcile places every started container whole.
//
// One chosen timing proved nothing before: at 2.5 s a write, a budget of 2 s fitted its
// margin while the installed 8 s did not (a write in flight at the budget kept the hook's
// process from exiting until the write was done, past runc's timeout).
func TestHookBudgetSweep(t *testing.T) {
	t.Parallel()
	latencies := []time.Duration{100 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second}
	budgets := []int{2, 5, 8}
	type sweepEnv struct {
		*e2e.RecEnv
		op     resctrlsim.Op
		points []*sweepPoint
	}
	// One simulator per latency, one pod per point, every point at once: go test runs only
	// GOMAXPROCS parallel subtests, so the points are goroutines of this test.
	var envs []*sweepEnv
	var wg sync.WaitGroup
	// In the environment of this test's hooks and their workers, so that waiting for them
	// ignores other tests' hooks (not RESCTRL_MON_: the config takes those for settings).
	mark := fmt.Sprintf("E2E_HOOK_SWEEP=%d-%d", os.Getpid(), time.Now().UnixNano())
	for _, op := range []resctrlsim.Op{resctrlsim.OpTasksWrite, resctrlsim.OpMkdir} {
		for _, lat := range latencies {
			e := &sweepEnv{RecEnv: e2e.NewRecEnv(t, resctrlsim.Options{}, ""), op: op}
			e.Sim.SetLatency(op, lat)
			envs = append(envs, e)
			for i, budget := range budgets {
				for j, policy := range []string{"open", "closed"} {
					n := 2*i + j + 1
					p := &sweepPoint{name: fmt.Sprintf("%s=%s budget=%ds %s", op, lat, budget, policy), id: fmt.Sprintf("b%d-%s", budget, policy),
						group: "mon_groups/" + sweepUID(n), policy: policy}
					p.b = e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"forker"},
						Annotations: e2e.CRIOPod(sweepUID(n), e2e.SandboxOf("0123456789abcdef"[n]), p.id), Hooks: installedHooks(e.CfgPath, budget, policy, mark)})
					e.points = append(e.points, p)
					wg.Go(func() { p.run(t, e.RecEnv) })
				}
			}
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// Repair: resctrl fast again, the operations still in flight end, then reconcile
	// completes every started container.
	for _, e := range envs {
		e.Sim.SetLatency(e.op, 0)
	}
	e2e.WaitNoProcess(t, e2e.Binaries.Hook, mark)
	for _, e := range envs {
		e.Reconcile()
		for _, p := range e.points {
			if p.started {
				e.AllPlaced(p.id, p.group)
			} else if st := e.StateOf(p.group); st != "idle" && st != "absent" {
				// A refused container may have been placed by the worker the hook left:
				// it is gone, and its pod holds nothing live.
				t.Errorf("%s: refused, and its pod's group is %s", p.name, st)
			}
		}
		e.Settled()
	}
}

// sweepPoint is one container of the sweep: its own pod, its budget and policy.
type sweepPoint struct {
	name, id, group, policy string
	b                       *e2e.Bundle
	started                 bool
}

// run starts the point's container through runc and checks the hook kept its promise. It
// runs on a goroutine of its own: it reports with t.Errorf only.
func (p *sweepPoint) run(t *testing.T, e *e2e.RecEnv) {
	start := time.Now()
	err := e.R.Run(p.id, p.b)
	t.Logf("%s: runc run: %s (%v)", p.name, time.Since(start).Round(time.Millisecond), err)
	switch {
	case err != nil && strings.Contains(err.Error(), "ran past specified timeout"):
		t.Errorf("%s: runc killed the hook: %v\n%s", p.name, err, e.LogFor(p.id))
	case err != nil && p.policy == "open":
		t.Errorf("%s: fail-open: the container did not start: %v\n%s", p.name, err, e.LogFor(p.id))
	case err != nil && !strings.Contains(err.Error(), "time budget exhausted"):
		t.Errorf("%s: fail-closed: refused without saying the budget ran out: %v", p.name, err)
	case err == nil:
		p.started = true
		err := poll.Until(20*time.Second, func() error {
			if out, _ := os.ReadFile(p.b.StdoutPath()); !strings.Contains(string(out), "ready") {
				return fmt.Errorf("forker not ready")
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
		}
	}
}

// installedHooks are the hooks as make install writes them: the budget on the command line
// and runc's timeout 2 s past it; policy is given as a flag too, and env marks them.
func installedHooks(cfgPath string, budget int, policy, env string) *specs.Hooks {
	h := func(stage string) specs.Hook {
		return specs.Hook{Path: e2e.Binaries.Hook, Timeout: e2e.IntPtr(budget + 2), Env: []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", env}, Args: []string{"resctrl-mon-hook", "--config", cfgPath,
			"--hookBudget", fmt.Sprintf("%ds", budget), "--failurePolicy", policy, stage}}
	}
	return &specs.Hooks{CreateRuntime: []specs.Hook{h("createRuntime")}, Poststop: []specs.Hook{h("poststop")}}
}

func sweepUID(n int) string { return fmt.Sprintf("5bee7000-0000-4000-8000-%012x", n) }
