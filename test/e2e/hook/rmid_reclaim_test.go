package hook_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestRMIDsReclaimedFromIdleGroups: pods come and go through real runc and the hook on a node
// of 6 RMIDs (5 groups), faster than the retention window (5m) frees them; in hooks mode every
// ended pod's group is idle, since nothing tells a hook that a pod ended. No new pod waits
// while an idle group holds an RMID: the group idle longest ends (its .end written), counted
// as reclaimed; a live pod keeps its group. Under rmidReclaim: none, today's strict
// retention: the next pod is pending.
//
// With the kernel's RMID limbo as well (on whenever llc_occupancy is monitored): a reclaimed
// group's RMID is dirty until the limbo worker's next pass (every second); the ended groups'
// lines are gone (their sleep left nothing in the cache), so the placement that reclaimed
// waits for that pass and the pod is created all the same.
func TestRMIDsReclaimedFromIdleGroups(t *testing.T) {
	t.Parallel()
	for _, limbo := range []bool{false, true} {
		t.Run(fmt.Sprintf("limbo %v", limbo), func(t *testing.T) {
			t.Parallel()
			testRMIDsReclaimedFromIdleGroups(t, limbo)
		})
	}
}

func testRMIDsReclaimedFromIdleGroups(t *testing.T, limbo bool) {
	e := e2e.NewHookEnv(t, resctrlsim.Options{NumRMIDs: 6, Limbo: limbo}, "")
	r := e2e.PreparedRuntime(t, "runc")
	// Each run its own pods: they run side by side.
	uid := func(i int) string {
		return fmt.Sprintf("6a1f3c2e-0000-4000-8%03d-%012d", map[bool]int{false: 0, true: 1}[limbo], i)
	}
	run := func(i int) string {
		t.Helper()
		id := fmt.Sprintf("p%02d", i)
		if err := r.Run(id, e.Bundle(e2e.CRIOPod(uid(i), strings.Repeat(fmt.Sprintf("%02x", i), 32), "app"), "sleep", "600")); err != nil {
			t.Fatalf("%s: %v\n%s", id, err, e.Log())
		}
		return id
	}
	run(0) // stays
	const churned = 12
	for i := 1; i <= churned; i++ {
		id := run(i)
		if n := e.LogLines("container="+id, "outcome=created"); n != 1 {
			t.Fatalf("pod %d was not given its group:\n%s", i, e.LogFor(id))
		}
		if err := r.Delete(id, true); err != nil { // its poststop: the group goes idle
			t.Fatal(err)
		}
	}
	if !e.Exists("mon_groups/" + uid(0)) {
		t.Errorf("the live pod lost its group")
	}
	// 4 groups were free besides the live pod's: every pod after those took an idle one's.
	st, err := registry.OpenReadOnly(e.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := st.Counts()
	if reclaimed := counts[vocab.OutcomeCount(vocab.SourceHook, vocab.Reclaimed)]; err != nil || reclaimed != churned-4 {
		t.Errorf("hook.reclaimed %d (%v), want %d; counts %v", reclaimed, err, churned-4, counts)
	}
	if p := counts[vocab.OutcomeCount(vocab.SourceHook, vocab.Pending)]; p != 0 {
		t.Errorf("%d pods pending:\n%s", p, e.Log())
	}
	for i := 1; i <= churned-4; i++ {
		ends := 0
		for _, n := range e2e.LifeSnapshots(t, e.SnapDir, uid(i)) {
			if n.Kind == snapshot.End {
				ends++
			}
		}
		if ends != 1 || e.Exists("mon_groups/"+uid(i)) {
			t.Errorf("pod %d's reclaimed group: %d .end snapshots, still there %v", i, ends, e.Exists("mon_groups/"+uid(i)))
		}
	}
	// Strict retention: the idle groups keep their RMIDs, the next pod waits.
	e.Config("rmidReclaim: none\n")
	id := run(churned + 1)
	if n := e.LogLines("container="+id, "outcome=pending", "Out of RMIDs"); n != 1 {
		t.Errorf("under rmidReclaim: none, pod %d was not pending:\n%s", churned+1, e.LogFor(id))
	}
}
