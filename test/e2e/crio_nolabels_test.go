package e2e_test

import (
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// A CRI-O pod whose CRI requests carry none of kubelet's labels (only the sandbox's
// metadata: name, namespace, uid) is placed by the pod UID CRI-O itself received, in its
// sandbox name: every task of both forking containers in the pod's group. These containers
// were refused before ("cri-o pod without io.kubernetes.pod.uid"), placed 0 of 38.
func TestHookCRIOWithoutKubeletLabels(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, resctrlsim.Options{}, "failurePolicy: closed\n")
	hooksDir := t.TempDir()
	for _, name := range []string{"resctrl-mon-createruntime.json", "resctrl-mon-poststop.json"} {
		installHookJSON(t, name, hooksDir, e.cfgPath)
	}
	crio := e2e.StartCRIO(t, e2e.CRIOOptions{HooksDir: hooksDir, Rootfs: e.rootfs})
	group := "mon_groups/" + uidB
	pod, err := crio.RunPod(e2e.PodSpec{Name: "nolabels", Namespace: "e2e", UID: uidB})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"app", "sidecar"} {
		id, err := crio.RunContainer(pod, e2e.TestImage, e2e.ContainerSpec{Name: name, Command: []string{"forker"}})
		if err != nil {
			t.Fatalf("%s did not start (failurePolicy closed): %v\nthe hook said:\n%s", name, err, e.log())
		}
		if err := crio.WaitLog(pod, name, "ready", 20*time.Second); err != nil {
			t.Fatal(err)
		}
		pid, err := crio.PID(id)
		if err != nil {
			t.Fatal(err)
		}
		tids, err := e2e.CgroupTasks(pid)
		if err != nil {
			t.Fatal(err)
		}
		placed := e.placedOf(group, tids)
		t.Logf("%s: placed %d of %d", name, placed, len(tids))
		if placed != len(tids) || len(tids) < 12 {
			t.Errorf("%s: %d of %d tasks in %s\nthe hook said:\n%s", name, placed, len(tids), group, e.log())
		}
	}
	recs := e.records()
	if len(recs) != 1 || recs[0].Namespace != "e2e" || recs[0].PodName != "nolabels" {
		t.Errorf("records: %+v", recs)
	}
}
