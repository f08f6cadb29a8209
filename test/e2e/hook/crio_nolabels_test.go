package hook_test

import (
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// A CRI-O pod whose CRI requests carry none of kubelet's labels (only the sandbox's
// metadata: name, namespace, uid) is placed by the pod UID CRI-O itself received, in its
// sandbox name: every task of both forking containers in the pod's group. These containers
// were refused before ("cri-o pod without io.kubernetes.pod.uid"), placed 0 of 38.
func TestHookCRIOWithoutKubeletLabels(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "failurePolicy: closed\n")
	crio := e.StartCRIOWithHooks(t, e2e.CRIOOptions{})
	group := "mon_groups/" + e2e.PodUIDB
	pod, err := crio.RunPod(e2e.PodSpec{Name: "nolabels", Namespace: "e2e", UID: e2e.PodUIDB})
	if err != nil {
		t.Fatal(err)
	}
	// failurePolicy closed: a container the hook refused does not start, and RunForkers
	// fails the test with what the hook said.
	ids := e2e.RunForkers(t, e, crio.CRI, pod, "app", "sidecar")
	e.WantForkersPlaced(t, crio.CRI, group, ids)
	recs := e.Records()
	if len(recs) != 1 || recs[0].Namespace != "e2e" || recs[0].PodName != "nolabels" {
		t.Errorf("records: %+v", recs)
	}
}
