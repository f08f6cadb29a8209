package nri_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestNRIContainerdExhaustion: RMIDs run out under a real containerd with the adapter. Under
// failurePolicy open the pod that gets none starts unmonitored and is recorded pending; under
// closed a container of a pod that would need a new RMID does not start, and containerd says
// why. Once an RMID is free, the pending pod is completed at its next container's start:
// every recorded container's init moved in, the pod marked late-assigned.
func TestNRIContainerdExhaustion(t *testing.T) {
	t.Parallel()
	// One RMID for the root group, one for a pod.
	e := e2e.NewHookEnv(t, resctrlsim.Options{NumRMIDs: 2}, "retention: 0s\n")
	ctrd := e2e.StartContainerd(t, e2e.ContainerdOptions{Rootfs: e.Rootfs})
	stop := e2e.StartAdapter(t, e, ctrd.NRISocket)
	sleep := e2e.ContainerSpec{Name: "app", Command: []string{"sleep", "600"}}

	podA, err := ctrd.RunPod(e2e.PodSpec{Name: "first", Namespace: "e2e", UID: e2e.PodUIDA, Kubelet: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ctrd.RunContainer(podA, e2e.TestImage, sleep); err != nil {
		t.Fatal(err)
	}
	groupB := "mon_groups/" + e2e.PodUIDB
	podB, err := ctrd.RunPod(e2e.PodSpec{Name: "second", Namespace: "e2e", UID: e2e.PodUIDB, Kubelet: true})
	if err != nil {
		t.Fatal(err)
	}
	b1, err := ctrd.RunContainer(podB, e2e.TestImage, sleep)
	if err != nil {
		t.Fatalf("fail-open: the container of the pod without an RMID did not start: %v\n%s", err, e.Log())
	}
	if n := e.LogLines("msg=placed", "event=StartContainer", "id="+b1, "outcome=pending", "no free RMID"); n != 1 {
		t.Errorf("the adapter does not say pod B is pending for want of an RMID:\n%s", e.Log())
	}
	if got := e.StateOf(groupB); got != string(inventory.Pending) {
		t.Errorf("pod B is %s, want pending", got)
	}

	// Fail-closed: the adapter reads its configuration at start.
	e.Config("retention: 0s\nfailurePolicy: closed\n")
	stop()
	stop = e2e.StartAdapter(t, e, ctrd.NRISocket)
	podC, err := ctrd.RunPod(e2e.PodSpec{Name: "third", Namespace: "e2e", UID: e2e.PodUIDC, Kubelet: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ctrd.RunContainer(podC, e2e.TestImage, sleep)
	t.Logf("fail-closed, no RMID: containerd said: %v", err)
	if err == nil || !strings.Contains(err.Error(), "failurePolicy: closed") || !strings.Contains(err.Error(), "no free RMID") {
		t.Errorf("fail-closed: %v, want the container refused, naming the policy and the missing RMID\n%s", err, e.Log())
	}
	if err := ctrd.StopPod(podC.ID); err != nil {
		t.Fatal(err)
	}
	if err := ctrd.RemovePod(podC.ID); err != nil {
		t.Fatal(err)
	}

	// Pod A goes and frees its RMID: pod B is completed at its next container's start.
	if err := ctrd.StopPod(podA.ID); err != nil {
		t.Fatal(err)
	}
	if err := ctrd.RemovePod(podA.ID); err != nil {
		t.Fatal(err)
	}
	if e.Exists("mon_groups/" + e2e.PodUIDA) {
		t.Fatalf("pod A's group outlived it (retention 0)\n%s", e.Log())
	}
	b2, err := ctrd.RunContainer(podB, e2e.TestImage, e2e.ContainerSpec{Name: "later", Command: []string{"sleep", "600"}})
	if err != nil {
		t.Fatalf("%v\n%s", err, e.Log())
	}
	for _, id := range []string{b1, b2} {
		pid, err := ctrd.PID(id)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(e.GroupTasks(groupB), pid) {
			t.Errorf("container %.12s's init %d is not in pod B's group once an RMID was free\n%s", id, pid, e.Log())
		}
	}
	if got := e.StateOf(groupB); got != string(inventory.LateAssigned) {
		t.Errorf("pod B is %s, want late-assigned (its first container ran outside the group)", got)
	}
	stop()
}
