package hook_test

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
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	crio := e.StartCRIOWithHooks(t, e2e.CRIOOptions{})
	group := "mon_groups/" + e2e.PodUIDA

	pod, err := crio.RunPod(e2e.PodSpec{Name: "forkers", Namespace: "e2e", UID: e2e.PodUIDA, Kubelet: true})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"app", "sidecar"}
	ids := e2e.RunForkers(t, e, crio.CRI, pod, names...)
	e.WantForkersPlaced(t, crio.CRI, group, ids)

	// status reports what the hook did: the pod's group made once, the second container joined.
	if c := e.Status().Counts; c["hook.created"] != 1 || c["hook.joined"] != 1 || c["snapshot.begin"] != 1 {
		t.Errorf("status counts %v, want hook.created 1, hook.joined 1, snapshot.begin 1", c)
	}

	rmid := e.RMID(group)
	if err := crio.Stop(ids["app"]); err != nil {
		t.Fatal(err)
	}
	if err := crio.Remove(ids["app"]); err != nil {
		t.Fatal(err)
	}
	if !e.Exists(group) || e.RMID(group) != rmid {
		t.Fatalf("after one container's removal the group is gone or has another RMID\n%s", e.Log())
	}
	// CRI-O runs poststop hooks within rmp: the group is gone when it returns.
	e.EndCRIPod(t, crio.CRI, pod.ID, group)
	for _, name := range names {
		if n := e.LogLines("stage=createRuntime", "container="+ids[name], "group="+group); n != 1 {
			t.Errorf("the hook log has %d createRuntime lines for %s, want 1:\n%s", n, name, e.Log())
		}
	}
}
