package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// With resctrl slower than runc's hook timeout (each tasks write takes 2.5 s, the hook's
// timeout is 4 s), the hook still ends inside its budget (2 s): under the open policy the
// container starts, the log says why the hook gave up, and reconcile later completes the pod,
// marked late-assigned. Under the closed policy the container is refused with that reason.
// Before the budget, runc killed the hook at its timeout and the container did not start,
// whatever the policy, with no log line.
func TestHookBudgetUnderRunc(t *testing.T) {
	t.Parallel()
	e := newRecEnv(t, resctrlsim.Options{}, "hookBudget: 2s\n")
	hooks := e.hooksTimingOut(4)
	e.sim.SetLatency(resctrlsim.OpTasksWrite, 2500*time.Millisecond)
	b := e2e.NewBundle(t, e.rootfs, e2e.BundleOptions{Args: []string{"forker"}, Annotations: crioPod(uidA, sandboxOf('a'), "app"), Hooks: hooks})
	start := time.Now()
	if err := e.r.Run("slow", b); err != nil {
		t.Fatalf("fail-open: the container did not start: %v\n%s", err, e.log())
	}
	t.Logf("runc run with resctrl at 2.5 s a write: %s", time.Since(start).Round(time.Millisecond))
	if n := e.logLines("container=slow", "time budget exhausted"); n != 1 {
		t.Errorf("the log does not say the budget ran out:\n%s", e.log())
	}
	waitReady(t, b)
	e.sim.SetLatency(resctrlsim.OpTasksWrite, 0)
	group := "mon_groups/" + uidA
	e.reconcile()
	e.allPlaced("slow", group)
	e.wantState(group, "late-assigned")

	e.setConfig("hookBudget: 2s\nfailurePolicy: closed\n")
	e.sim.SetLatency(resctrlsim.OpTasksWrite, 2500*time.Millisecond)
	closed := e2e.NewBundle(t, e.rootfs, e2e.BundleOptions{Args: []string{"forker"}, Annotations: crioPod(uidB, sandboxOf('b'), "app"), Hooks: hooks})
	err := e.r.Run("refused", closed)
	e.sim.SetLatency(resctrlsim.OpTasksWrite, 0)
	if err == nil || !strings.Contains(err.Error(), "time budget exhausted") {
		t.Errorf("fail-closed: %v", err)
	}
}
