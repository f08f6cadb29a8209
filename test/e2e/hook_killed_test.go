package e2e_test

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
	e := newRecEnv(t, resctrlsim.Options{}, "hookBudget: 30s\n")
	hooks := e.hooksTimingOut(1)
	e.sim.SetLatency(resctrlsim.OpTasksWrite, 3*time.Second)
	b := e2e.NewBundle(t, e.rootfs, e2e.BundleOptions{Args: []string{"forker"}, Annotations: crioPod(uidA, sandboxOf('a'), "first"), Hooks: hooks})
	if err := e.r.Run("killed", b); err == nil {
		t.Fatalf("runc started a container whose hook it killed")
	}
	e.sim.SetLatency(resctrlsim.OpTasksWrite, 0)
	group := "mon_groups/" + uidA
	t.Logf("after the killed hook: %s", e.stateOf(group))
	e.run("second", uidA, e.hooks())
	e.reconcile()
	e.wantState(group, "active") // the pod's only running container was placed whole
	e.allPlaced("second", group)
	e.settled()
}
