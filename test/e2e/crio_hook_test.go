package e2e_test

import (
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestHookCRIO runs the hook as installed (the shipped hooks.d JSON in CRI-O's hooks_dir)
// under a real CRI-O: a pod with kubelet's labels and two containers whose inits fork
// children and threads the moment they start. Every task of both containers is in the pod's
// group; the group survives one container's removal and goes with the pod (rmp).
func TestHookCRIO(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	crio := e.startCRIOWithHooks(t, e2e.CRIOOptions{})
	group := "mon_groups/" + uidA

	pod, err := crio.RunPod(e2e.PodSpec{Name: "forkers", Namespace: "e2e", UID: uidA, Kubelet: true})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"app", "sidecar"}
	ids := runForkers(t, e, crio.CRI, pod, names...)
	e.wantForkersPlaced(t, crio.CRI, group, ids)

	// status reports what the hook did: the pod's group made once, the second container joined.
	if c := e.status().Counts; c["hook.created"] != 1 || c["hook.joined"] != 1 || c["snapshot.begin"] != 1 {
		t.Errorf("status counts %v, want hook.created 1, hook.joined 1, snapshot.begin 1", c)
	}

	rmid := e.rmid(group)
	if err := crio.Stop(ids["app"]); err != nil {
		t.Fatal(err)
	}
	if err := crio.Remove(ids["app"]); err != nil {
		t.Fatal(err)
	}
	if !e.exists(group) || e.rmid(group) != rmid {
		t.Fatalf("after one container's removal the group is gone or has another RMID\n%s", e.log())
	}
	// CRI-O runs poststop hooks within rmp: the group is gone when it returns.
	e.endCRIPod(t, crio.CRI, pod.ID, group)
	for _, name := range names {
		if n := e.logLines("stage=createRuntime", "container="+ids[name], "group="+group); n != 1 {
			t.Errorf("the hook log has %d createRuntime lines for %s, want 1:\n%s", n, name, e.log())
		}
	}
}
