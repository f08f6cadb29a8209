package hook_test

import (
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// A hook killed mid-way by runc (its budget set past runc's timeout, as a misinstall would)
// stops that container, which is runc's rule; the pod's next container, placed whole by its
// own hook, must not be marked late-assigned because of the one that never ran.
func TestKilledHookDoesNotMakeThePodLate(t *testing.T) {
	t.Parallel()
	e := e2e.NewRecEnv(t, resctrlsim.Options{}, "hookBudget: 30s\n")
	hooks := e.HooksTimingOut(1)
	e.Sim.SetLatency(resctrlsim.OpTasksWrite, 3*time.Second)
	b := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"forker"}, Annotations: e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "first"), Hooks: hooks})
	if err := e.R.Run("killed", b); err == nil {
		t.Fatalf("runc started a container whose hook it killed")
	}
	e.Sim.SetLatency(resctrlsim.OpTasksWrite, 0)
	group := "mon_groups/" + e2e.PodUIDA
	t.Logf("after the killed hook: %s", e.StateOf(group))
	e.Run("second", e2e.PodUIDA, e.Hooks())
	e.Reconcile()
	e.WantState(group, "active") // the pod's only running container was placed whole
	e.AllPlaced("second", group)
	e.Settled()
}
