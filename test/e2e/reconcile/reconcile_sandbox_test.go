package reconcile_test

import (
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// A CRI-O pod's pause container gets no hooks (CRI-O injects none into it): its process
// stays outside the pod's group by the project's rule, so reconcile must neither move it in
// (which marked every CRI-O pod late-assigned within a minute of the timer) nor count it as
// a live container that keeps a deleted pod's group for a second retention round.
func TestReconcileLeavesThePauseContainerOut(t *testing.T) {
	t.Parallel()
	e := e2e.NewRecEnv(t, resctrlsim.Options{}, "retention: 1s\n")
	sb := e2e.SandboxOf('a')
	pause := e2e.CRIOPod(e2e.PodUIDA, sb, "POD")
	pause["io.kubernetes.cri-o.ContainerType"] = "sandbox"
	pb := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"sleep", "600"}, Annotations: pause})
	if err := e.R.Run(sb, pb); err != nil {
		t.Fatal(err)
	}
	e.Run("app", e2e.PodUIDA, e.Hooks())
	group := "mon_groups/" + e2e.PodUIDA
	if acts := e.Reconcile(); len(acts) != 0 {
		t.Errorf("reconcile acted on a pod the hook placed whole: %+v", acts)
	}
	if got := e.StateOf(group); got != "active" {
		t.Errorf("status says %s, want active", got)
	}
	// The pod is deleted: its app container goes through poststop, the pause container
	// (no hooks) just goes.
	if err := e.R.Delete("app", true); err != nil {
		t.Fatal(err)
	}
	if err := e.R.Delete(sb, true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the retention window, which nothing signals
	e.Reconcile()
	if e.Exists(group) {
		t.Errorf("the deleted pod's group outlived one retention window")
	}
	e.Settled()
}
