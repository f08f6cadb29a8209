package e2e_test

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
	e := newRecEnv(t, resctrlsim.Options{}, "retention: 1s\n")
	sb := sandboxOf('a')
	pause := crioPod(uidA, sb, "POD")
	pause["io.kubernetes.cri-o.ContainerType"] = "sandbox"
	pb := e2e.NewBundle(t, e.rootfs, e2e.BundleOptions{Args: []string{"sleep", "600"}, Annotations: pause})
	if err := e.r.Run(sb, pb); err != nil {
		t.Fatal(err)
	}
	e.run("app", uidA, e.hooks())
	group := "mon_groups/" + uidA
	if acts := e.reconcile(); len(acts) != 0 {
		t.Errorf("reconcile acted on a pod the hook placed whole: %+v", acts)
	}
	if got := e.stateOf(group); got != "active" {
		t.Errorf("status says %s, want active", got)
	}
	// The pod is deleted: its app container goes through poststop, the pause container
	// (no hooks) just goes.
	if err := e.r.Delete("app", true); err != nil {
		t.Fatal(err)
	}
	if err := e.r.Delete(sb, true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the retention window, which nothing signals
	e.reconcile()
	if e.exists(group) {
		t.Errorf("the deleted pod's group outlived one retention window")
	}
	e.settled()
}
