package nri_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestNRICRIO runs the NRI adapter against a real CRI-O 1.34.0 (enable_nri), first alone,
// then beside the hooks in CRI-O's hooks_dir.
//
// Alone: CRI-O 1.34 sends no pid with its NRI events; the adapter finds the created init in
// the container's cgroup at StartContainer and places it before the container runs: every
// task of both forking containers in the pod's group, no late pass, the pod active. Beside
// the hooks: the
// hook places each container at createRuntime, race-free; the adapter, seeing the same
// containers, places none of them again: one group, one RMID, one .begin, and the pod not
// marked late. Each pod's removal removes its group.
func TestNRICRIO(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	hooksDir := t.TempDir()
	crio := e2e.StartCRIO(t, e2e.CRIOOptions{HooksDir: hooksDir, Rootfs: e.Rootfs})
	stopAdapter := e2e.StartAdapter(t, e, crio.NRISocket)

	// The adapter alone.
	alone := "mon_groups/" + e2e.PodUIDA
	pod, err := crio.RunPod(e2e.PodSpec{Name: "nri-only", Namespace: "e2e", UID: e2e.PodUIDA, Kubelet: true})
	if err != nil {
		t.Fatal(err)
	}
	ids := e2e.RunForkers(t, e, crio.CRI, pod, "app", "sidecar")
	// What CRI-O 1.34.0 was seen to send: no pid at StartContainer (NRI's pid field is
	// filled from 1.36), nor at PostStartContainer. The adapter finds the init alone in the
	// container's cgroup at StartContainer, before the container runs.
	noPid := e.LogLines("event=StartContainer", "pid=0 ", "init=")
	t.Logf("CRI-O's NRI: %d of 2 StartContainer events without a pid", noPid)
	if n := e.LogLines("msg=placed", "event=StartContainer", "outcome=created"); n != 1 {
		t.Errorf("%d creations at StartContainer, want 1\n%s", n, e.Log())
	}
	if n := e.LogLines("msg=placed", "event=StartContainer", "outcome=joined"); n != 1 {
		t.Errorf("%d joins at StartContainer, want 1\n%s", n, e.Log())
	}
	if n := e.LogLines("msg=placed", "event=PostStartContainer"); n != 0 {
		t.Errorf("%d placements at PostStartContainer, want none (late)\n%s", n, e.Log())
	}
	// Every task of a container that forks the moment it starts, with no late pass: the
	// init was placed before it ran.
	e.WantForkersPlaced(t, crio.CRI, alone, ids)
	if got := e.StateOf(alone); got != string(inventory.Active) {
		t.Errorf("the adapter's pod is %s, want active (placed before it ran)", got)
	}
	// The adapter restarted while the pod runs: its Synchronize gets CRI-O's containers
	// without pids too, finds them by their cgroups, and has nothing to repair.
	rmid := e.RMID(alone)
	stopAdapter()
	e2e.StartAdapter(t, e, crio.NRISocket)
	if n := e.LogLines("msg=synchronized", "steps=0 "); n != 2 {
		t.Errorf("%d synchronizations with nothing to do, want 2 (start, restart)\n%s", n, e.Log())
	}
	if n := e.LogLines("msg=synchronized", "live=2 "); n != 1 {
		t.Errorf("the restart's Synchronize did not count the pod's 2 containers as live\n%s", e.Log())
	}
	e.WantForkersPlaced(t, crio.CRI, alone, ids)
	if e.RMID(alone) != rmid || e.StateOf(alone) != string(inventory.Active) {
		t.Errorf("after the adapter's restart: RMID %d (was %d), state %s", e.RMID(alone), rmid, e.StateOf(alone))
	}
	e.EndCRIPod(t, crio.CRI, pod.ID, alone)

	// The hooks beside the adapter, on one state dir.
	e.InstallShippedHooks(t, hooksDir)
	both := "mon_groups/" + e2e.PodUIDB
	before := len(e.Records())
	pod, err = crio.RunPod(e2e.PodSpec{Name: "both", Namespace: "e2e", UID: e2e.PodUIDB, Kubelet: true})
	if err != nil {
		t.Fatal(err)
	}
	ids = e2e.RunForkers(t, e, crio.CRI, pod, "app", "sidecar")
	e.WantForkersPlaced(t, crio.CRI, both, ids)
	for name, id := range ids {
		if n := e.LogLines("stage=createRuntime", "container="+id, "outcome="); n != 1 {
			t.Errorf("%s: %d createRuntime hook lines, want 1", name, n)
		}
	}
	if got := e.StateOf(both); got != string(inventory.Active) {
		t.Errorf("the pod both placed is %s, want active (the hook placed it race-free)\n%s", got, e.Log())
	}
	if recs := e.Records(); len(recs) != before+1 {
		t.Errorf("%d registry entries, want %d: one for the pod", len(recs), before+1)
	}
	if kinds := e2e.SnapshotKinds(t, e, e2e.PodUIDB); !slices.Equal(kinds, []snapshot.Kind{snapshot.Begin}) {
		t.Errorf("snapshots of the pod %v, want one .begin", kinds)
	}
	created := 0
	for _, l := range strings.Split(e.Log(), "\n") {
		if strings.Contains(l, "outcome=created") && strings.Contains(l, "group="+both) {
			created++
		}
	}
	if created != 1 {
		t.Errorf("the pod's group was created %d times by the hook and the adapter together, want once\n%s", created, e.Log())
	}
	e.EndCRIPod(t, crio.CRI, pod.ID, both)
}
