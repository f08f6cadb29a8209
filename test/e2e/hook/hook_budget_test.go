package hook_test

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
	e := e2e.NewRecEnv(t, resctrlsim.Options{}, "hookBudget: 2s\n")
	hooks := e.HooksTimingOut(4)
	e.Sim.SetLatency(resctrlsim.OpTasksWrite, 2500*time.Millisecond)
	b := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"forker"}, Annotations: e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app"), Hooks: hooks})
	start := time.Now()
	if err := e.R.Run("slow", b); err != nil {
		t.Fatalf("fail-open: the container did not start: %v\n%s", err, e.Log())
	}
	t.Logf("runc run with resctrl at 2.5 s a write: %s", time.Since(start).Round(time.Millisecond))
	if n := e.LogLines("container=slow", "time budget exhausted"); n != 1 {
		t.Errorf("the log does not say the budget ran out:\n%s", e.Log())
	}
	e2e.WaitReady(t, b)
	e.Sim.SetLatency(resctrlsim.OpTasksWrite, 0)
	group := "mon_groups/" + e2e.PodUIDA
	e.Reconcile()
	e.AllPlaced("slow", group)
	e.WantState(group, "late-assigned")

	e.SetConfig("hookBudget: 2s\nfailurePolicy: closed\n")
	e.Sim.SetLatency(resctrlsim.OpTasksWrite, 2500*time.Millisecond)
	closed := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"forker"}, Annotations: e2e.CRIOPod(e2e.PodUIDB, e2e.SandboxOf('b'), "app"), Hooks: hooks})
	err := e.R.Run("refused", closed)
	e.Sim.SetLatency(resctrlsim.OpTasksWrite, 0)
	if err == nil || !strings.Contains(err.Error(), "time budget exhausted") {
		t.Errorf("fail-closed: %v", err)
	}
}
