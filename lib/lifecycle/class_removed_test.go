package lifecycle

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/container"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// An allocation class removed while a pod runs in it (rmdir of the control group: the
// kernel's rdtgroup_rmdir_ctrl removes its monitoring groups and moves every task to the
// root group): reconcile cannot make the pod's group again under a class that is not
// there. It says so, as a refusal naming the class, and returns no error, at every pass
// (no failure counted each time, nothing made elsewhere); the record stays, so the group is
// made again once the class is. Simulator only: the fake has no class directories.
func TestReconcileClassRemoved(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mkClass("gold")
	in := e.hold(0)
	e.intoClass("gold", in.Pid)
	if out, err := e.place("c1", in.Pid, crio(podA, sbA), "gold"); err != nil || out.Action != vocab.Created {
		t.Fatalf("place in gold: %+v, %v", out, err)
	}
	in.release()
	if err := os.Remove(filepath.Join(e.sim.Dir, "gold")); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(e.tasks(""), in.Pid) {
		t.Fatalf("the class's removal left %d outside the root group", in.Pid)
	}
	idn := identity.Identity{Runtime: identity.CRIO, PodUID: podA, SandboxID: sbA, Namespace: "default", PodName: "web"}
	live := []container.Container{{ID: "c1", Pid: in.Pid, Pod: &idn, ClosID: "gold"}}
	for pass := range 2 {
		acts, err := e.m.Reconcile(live, ReconcileOptions{})
		if err != nil || len(acts) != 1 || acts[0].Action != vocab.Refused || !strings.Contains(acts[0].Detail, `class "gold"`) {
			t.Errorf("pass %d: %+v, %v; want one refusal naming the class, no error", pass, acts, err)
		}
	}
	if e.exists(GroupPath("", podA)) || e.exists(GroupPath("gold", podA)) {
		t.Errorf("a group was made for the pod")
	}
	if _, owned, err := e.m.store.Load(podA); err != nil || !owned {
		t.Errorf("the pod's record: owned %v, %v; want it kept", owned, err)
	}
	// The class made again (an operator, a runtime applying its RDT config): the next pass
	// makes the group in it.
	e.mkClass("gold")
	e.intoClass("gold", in.Pid)
	acts, err := e.m.Reconcile(live, ReconcileOptions{})
	if err != nil || len(acts) == 0 || acts[0].Action != vocab.Recreated || !e.exists(GroupPath("gold", podA)) {
		t.Errorf("with the class back: %+v, %v; want the group re-made in it", acts, err)
	}
	if rec, _, err := e.m.store.Load(podA); err != nil || !rec.LateAssigned {
		t.Errorf("the pod's record after its tasks were moved back: late-assigned %v, %v; want true", rec.LateAssigned, err)
	}
}
