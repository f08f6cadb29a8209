package nri_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestHooksAndAdapterShareANode: one node, one resctrl, one state dir, one configuration; a
// podman pod placed by the OCI hooks (hooks.d) and a containerd pod placed by the NRI adapter,
// running at once. status shows both pods active with their containers and no failure; the
// adapter's Synchronize (a restart) leaves the podman pod's group and tasks alone although
// containerd does not know it; each pod's end removes only its own group.
func TestHooksAndAdapterShareANode(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	hooksDir := t.TempDir()
	e.InstallShippedHooks(t, hooksDir)
	ctrd := e2e.StartContainerd(t, e2e.ContainerdOptions{Rootfs: e.Rootfs})
	stopAdapter := e2e.StartAdapter(t, e, ctrd.NRISocket)

	pm := e2e.Podman(t)
	ppod, err := pm.CreatePod(e2e.PodOptions{Name: e2e.RandomName("shared-")})
	if err != nil {
		t.Fatal(err)
	}
	var members []string
	for i := range 2 {
		id, err := pm.Run(e2e.PodmanRunOptions{HooksDir: hooksDir, Pod: ppod.Name, Name: fmt.Sprintf("%s-m%d", ppod.Name, i),
			Rootfs: e.Rootfs, Args: []string{"forker"}, Detach: true})
		if err != nil {
			t.Fatalf("podman member %d: %v\n%s", i, err, e.Log())
		}
		members = append(members, id)
	}
	cpod, err := ctrd.RunPod(e2e.PodSpec{Name: "shop", Namespace: "e2e", UID: e2e.PodUIDA, Kubelet: true})
	if err != nil {
		t.Fatal(err)
	}
	var ctrs []string
	for _, name := range []string{"app", "sidecar"} {
		id, err := ctrd.RunContainer(cpod, e2e.TestImage, e2e.ContainerSpec{Name: name, Command: []string{"forker"}})
		if err != nil {
			t.Fatalf("%v\n%s", err, e.Log())
		}
		if err := ctrd.WaitLog(cpod, name, "ready", 20*time.Second); err != nil {
			t.Fatal(err)
		}
		ctrs = append(ctrs, id)
	}
	podmanGroup, ctrdGroup := "mon_groups/"+ppod.InfraID, "mon_groups/"+e2e.PodUIDA
	pids := map[string]int{}
	for _, id := range members {
		e2e.WaitPodmanReady(t, pm, id)
		if pids[id], err = pm.PID(id); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ctrs {
		if pids[id], err = ctrd.PID(id); err != nil {
			t.Fatal(err)
		}
	}
	checkPlaced := func(when string) {
		t.Helper()
		for id, pid := range pids {
			group := ctrdGroup
			if slices.Contains(members, id) {
				group = podmanGroup
			}
			tids, err := e2e.CgroupTasks(pid)
			if err != nil {
				t.Fatal(err)
			}
			_ = e.GroupTasks("") // the simulator takes in its queued fork events
			placed := e.PlacedOf(group, tids)
			t.Logf("%s: %.12s: placed %d of %d in %s", when, id, placed, len(tids), group)
			if placed != len(tids) || len(tids) < 12 {
				t.Errorf("%s: %.12s: %d of %d tasks in %s\n%s", when, id, placed, len(tids), group, e.Log())
			}
		}
	}
	checkPlaced("both running")

	checkStatus := func(when string, want map[string][]string) {
		t.Helper()
		st := e.Status()
		got := map[string][]string{}
		for _, g := range st.Groups {
			if g.State != inventory.Active {
				t.Errorf("%s: %s is %s (%s), want active", when, g.Path, g.State, g.Detail)
			}
			for _, c := range g.Containers {
				got[g.Path] = append(got[g.Path], c.ID)
			}
			slices.Sort(got[g.Path])
		}
		for path := range want {
			slices.Sort(want[path])
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: status shows %v, want %v", when, got, want)
		}
		if len(st.Failures) != 0 || len(st.Recent) != 0 {
			t.Errorf("%s: status shows failures: %v %+v", when, st.Failures, st.Recent)
		}
	}
	checkStatus("both running", map[string][]string{podmanGroup: slices.Clone(members), ctrdGroup: slices.Clone(ctrs)})

	// The adapter restarts: its Synchronize is a reconcile with containerd's containers as
	// the live ones. The podman pod is not among them, and must not be touched.
	podmanRMID := e.RMID(podmanGroup)
	stopAdapter()
	e2e.StartAdapter(t, e, ctrd.NRISocket)
	checkPlaced("after the adapter's Synchronize")
	if got := e.RMID(podmanGroup); got != podmanRMID {
		t.Errorf("the podman pod's RMID went from %d to %d at the adapter's Synchronize", podmanRMID, got)
	}
	checkStatus("after the adapter's Synchronize", map[string][]string{podmanGroup: slices.Clone(members), ctrdGroup: slices.Clone(ctrs)})

	// Each pod's end removes its own group only.
	if err := ctrd.StopPod(cpod.ID); err != nil {
		t.Fatal(err)
	}
	if err := ctrd.RemovePod(cpod.ID); err != nil {
		t.Fatal(err)
	}
	if e.Exists(ctrdGroup) || !e.Exists(podmanGroup) {
		t.Errorf("after the containerd pod's removal: its group exists %v, the podman pod's %v\n%s", e.Exists(ctrdGroup), e.Exists(podmanGroup), e.Log())
	}
	e.EndPodmanPod(t, pm, ppod.ID, podmanGroup)
}
