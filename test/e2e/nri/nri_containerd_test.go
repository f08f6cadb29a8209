package nri_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestNRIContainerd runs the NRI adapter as an external plugin of a real containerd 2.4.2,
// driven through crictl as kubelet drives it: a pod of three containers whose inits fork
// children and threads the moment they start has every task in the pod's group; a container
// re-created 20 times in the pod keeps the pod's one RMID; removing the pod writes .end and
// removes the group; a group made by someone else with a pod-UID name survives it all.
func TestNRIContainerd(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	foreign := "mon_groups/99999999-8888-4777-8666-555555555555"
	if err := os.Mkdir(filepath.Join(e.Sim.Dir, foreign), 0o755); err != nil {
		t.Fatal(err)
	}
	ctrd := e2e.StartContainerd(t, e2e.ContainerdOptions{Rootfs: e.Rootfs})
	// One process on the node: the adapter also serves the exporter.
	e2e.StartAdapter(t, e, ctrd.NRISocket, "--listen", "127.0.0.1:0")
	metrics := adapterMetricsURL(t, e)
	group := "mon_groups/" + e2e.PodUIDA

	pod, err := ctrd.RunPod(e2e.PodSpec{Name: "forkers", Namespace: "e2e", UID: e2e.PodUIDA, Kubelet: true})
	if err != nil {
		t.Fatal(err)
	}
	ids := e2e.RunForkers(t, e, ctrd.CRI, pod, "app", "sidecar", "helper")
	e.WantForkersPlaced(t, ctrd.CRI, group, ids)

	checkAdapterMetrics(t, metrics, map[string]float64{
		`resctrl_mon_outcomes_total{action="created",source="adapter"}`:                                                                   1,
		`resctrl_mon_outcomes_total{action="joined",source="adapter"}`:                                                                    2,
		`resctrl_mon_pod_info{class="",group="` + group + `",namespace="e2e",pod="forkers",pod_uid="` + e2e.PodUIDA + `",state="active"}`: 1,
		`resctrl_mon_snapshots_written_total{kind="begin"}`:                                                                               1,
	})

	rmid := e.RMID(group)
	for i := range 20 {
		id, err := ctrd.RunContainer(pod, e2e.TestImage, e2e.ContainerSpec{Name: "restarted", Command: []string{"sleep", "600"}})
		if err != nil {
			t.Fatalf("re-creation %d: %v\nthe adapter said:\n%s", i, err, e.Log())
		}
		pid, err := ctrd.PID(id)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(e.GroupTasks(group), pid) {
			t.Errorf("re-creation %d: its init %d is not in %s", i, pid, group)
		}
		if got := e.RMID(group); got != rmid {
			t.Fatalf("re-creation %d: RMID %d, want the pod's %d", i, got, rmid)
		}
		if err := ctrd.Stop(id); err != nil {
			t.Fatal(err)
		}
		if err := ctrd.Remove(id); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.RMID(group); got != rmid {
		t.Errorf("after 20 re-creations the RMID is %d, want %d", got, rmid)
	}

	e.EndCRIPod(t, ctrd.CRI, pod.ID, group)
	if kinds := e2e.SnapshotKinds(t, e, e2e.PodUIDA); !slices.Equal(kinds, []snapshot.Kind{snapshot.Begin, snapshot.End}) {
		t.Errorf("snapshots of the pod %v, want one life's .begin and .end", kinds)
	}
	if !e.Exists(foreign) {
		t.Errorf("the foreign group %s was removed", foreign)
	}
	// containerd gives the pid at StartContainer, the race-free point: no placement was late.
	if n := e.LogLines("msg=placed", "event=StartContainer", "outcome="); n != 23 {
		t.Errorf("%d placements at StartContainer, want 23\n%s", n, e.Log())
	}
	if n := e.LogLines("event=PostStartContainer"); n != 0 {
		t.Errorf("%d placements at PostStartContainer, want none\n%s", n, e.Log())
	}
}

// adapterMetricsURL is where the adapter started with --listen 127.0.0.1:0 serves, from the
// line its log has once it listens.
func adapterMetricsURL(t *testing.T, e *e2e.HookEnv) string {
	t.Helper()
	re := regexp.MustCompile(`msg="serving /metrics and /healthz" .*address=(\S+)`)
	var addr string
	if err := poll.Until(10*time.Second, func() error {
		m := re.FindStringSubmatch(e.Log())
		if m == nil {
			return os.ErrNotExist
		}
		addr = m[1]
		return nil
	}); err != nil {
		t.Fatalf("the adapter does not say it serves metrics:\n%s", e.Log())
	}
	return "http://" + addr
}

// checkAdapterMetrics scrapes the adapter's /metrics once and wants each series' value; its
// /healthz must be ok.
func checkAdapterMetrics(t *testing.T, base string, want map[string]float64) {
	t.Helper()
	if code, body := e2e.HTTPGet(t, base+"/healthz", "", ""); code != 200 {
		t.Errorf("the adapter's /healthz: %d %s", code, body)
	}
	_, body := e2e.HTTPGet(t, base+"/metrics", "", "")
	for series, v := range want {
		if got, ok := e2e.SeriesValue(body, series); !ok || got != v {
			t.Errorf("the adapter's /metrics: %s = %v (present %v), want %v", series, got, ok, v)
		}
	}
}

// TestNRIContainerdRestart: the adapter is killed while pods run; meanwhile one pod is
// removed and another started; restarted, it removes the first's group (.end written),
// places the new pod (late-assigned) and leaves the running one as it was. A pod in an
// excluded namespace never gets a group. The retention window is long: the removed pod's
// group goes at Synchronize because containerd's pod list no longer has its sandbox, as the
// RemovePodSandbox the adapter missed would have ended it, not when the window passes.
func TestNRIContainerdRestart(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 1h\nnamespaces: {exclude: [kube-system]}\n")
	ctrd := e2e.StartContainerd(t, e2e.ContainerdOptions{Rootfs: e.Rootfs})
	stop := e2e.StartAdapter(t, e, ctrd.NRISocket)
	forker := []string{"forker"}
	// Placed late (the adapter is down when it starts): a workload that is still once
	// ready, unlike the forker, whose Go runtime may start a thread at any time.
	still := []string{"sh", "-c", "sleep 600 & sh -c 'sleep 600 & wait' & echo ready; wait"}
	run := func(uid, ns, name string, cmd []string) (*e2e.Pod, string) {
		t.Helper()
		pod, err := ctrd.RunPod(e2e.PodSpec{Name: name, Namespace: ns, UID: uid, Kubelet: true})
		if err != nil {
			t.Fatal(err)
		}
		id, err := ctrd.RunContainer(pod, e2e.TestImage, e2e.ContainerSpec{Name: "app", Command: cmd})
		if err != nil {
			t.Fatalf("%v\n%s", err, e.Log())
		}
		if err := ctrd.WaitLog(pod, "app", "ready", 20*time.Second); err != nil {
			t.Fatal(err)
		}
		return pod, id
	}
	uidC, uidD := "22222222-3333-4444-5555-666666666666", "33333333-3333-4333-8333-333333333333"
	gone, goneID := run(e2e.PodUIDA, "e2e", "gone", forker)
	_, staysID := run(e2e.PodUIDB, "e2e", "stays", forker)
	run(uidD, "kube-system", "excluded", forker)
	rmidB := e.RMID("mon_groups/" + e2e.PodUIDB)
	stop()

	if err := ctrd.Stop(goneID); err != nil {
		t.Fatal(err)
	}
	if err := ctrd.StopPod(gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := ctrd.RemovePod(gone.ID); err != nil {
		t.Fatal(err)
	}
	_, newID := run(uidC, "e2e", "new", still)
	if err := poll.Until(20*time.Second, func() error {
		pid, err := ctrd.PID(newID)
		if err != nil {
			return err
		}
		if tids, err := e2e.CgroupTasks(pid); err != nil || len(tids) < 4 {
			return fmt.Errorf("%d tasks: %w", len(tids), err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !e.Exists("mon_groups/"+e2e.PodUIDA) || e.Exists("mon_groups/"+uidC) {
		t.Fatalf("the stopped adapter acted")
	}

	e2e.StartAdapter(t, e, ctrd.NRISocket)
	if e.Exists("mon_groups/" + e2e.PodUIDA) {
		t.Errorf("the removed pod's group is still there\n%s", e.Log())
	}
	for uid, id := range map[string]string{e2e.PodUIDB: staysID, uidC: newID} {
		pid, err := ctrd.PID(id)
		if err != nil {
			t.Fatal(err)
		}
		tids, err := e2e.CgroupTasks(pid)
		if err != nil {
			t.Fatal(err)
		}
		_ = e.GroupTasks("")
		placed := e.PlacedOf("mon_groups/"+uid, tids)
		t.Logf("%s: placed %d of %d", uid, placed, len(tids))
		if placed != len(tids) {
			t.Errorf("%s: %d of %d tasks in its group\n%s", uid, placed, len(tids), e.Log())
		}
	}
	if got := e.RMID("mon_groups/" + e2e.PodUIDB); got != rmidB {
		t.Errorf("the running pod's RMID changed: %d, was %d", got, rmidB)
	}
	late := map[string]bool{}
	for _, r := range e.Records() {
		late[r.PodUID] = r.LateAssigned
	}
	if !late[uidC] || late[e2e.PodUIDB] {
		t.Errorf("late-assigned: %v; want only the pod started while the adapter was down", late)
	}
	if e.Exists("mon_groups/" + uidD) {
		t.Errorf("a pod in an excluded namespace got a group")
	}
}
