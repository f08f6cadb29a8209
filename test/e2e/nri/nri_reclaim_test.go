package nri_test

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestNRIContainerdRMIDReclaim: pods churn through a real containerd and the NRI adapter on
// a node of 6 RMIDs (5 groups) faster than the retention window (5m) frees them. Each pod's
// container completes and is stopped while its sandbox stays (a finished Job's pod, kept
// until somebody deletes it): its group is idle, holding an RMID. No new pod waits while an
// idle group holds one: the group idle longest ends (its .end written), counted as
// adapter.reclaimed, and the new pod is created; the live pod keeps its group throughout.
// Under rmidReclaim: none (an operator's strict retention) the next pod is pending, and is
// completed as soon as an RMID is free, by the adapter itself, without an event of its own.
//
// With the kernel's RMID limbo as well (on whenever llc_occupancy is monitored): a reclaimed
// or removed group's RMID is dirty until the limbo worker's next pass (every second). The
// reclaimed groups' lines are gone, so the placement that reclaimed waits for that pass and
// the pod is created all the same; the pending pod is completed once the deleted pod's RMID
// has left limbo.
func TestNRIContainerdRMIDReclaim(t *testing.T) {
	t.Parallel()
	for _, limbo := range []bool{false, true} {
		t.Run(fmt.Sprintf("limbo %v", limbo), func(t *testing.T) {
			t.Parallel()
			testNRIContainerdRMIDReclaim(t, limbo)
		})
	}
}

func testNRIContainerdRMIDReclaim(t *testing.T, limbo bool) {
	e := e2e.NewHookEnv(t, resctrlsim.Options{NumRMIDs: 6, Limbo: limbo}, "")
	ctrd := e2e.StartContainerd(t, e2e.ContainerdOptions{Rootfs: e.Rootfs})
	stop := e2e.StartAdapter(t, e, ctrd.NRISocket)
	// Each run its own pods: they run side by side, each on its own containerd.
	uid := func(i int) string {
		return fmt.Sprintf("7b2e4d3f-0000-4000-8%03d-%012d", map[bool]int{false: 0, true: 1}[limbo], i)
	}
	group := func(i int) string { return "mon_groups/" + uid(i) }
	run := func(i int) (*e2e.Pod, string) {
		t.Helper()
		pod, err := ctrd.RunPod(e2e.PodSpec{Name: fmt.Sprintf("churn-%02d", i), Namespace: "e2e", UID: uid(i), Kubelet: true})
		if err != nil {
			t.Fatal(err)
		}
		id, err := ctrd.RunContainer(pod, e2e.TestImage, e2e.ContainerSpec{Name: "app", Command: []string{"sleep", "600"}})
		if err != nil {
			t.Fatalf("pod %d: %v\n%s", i, err, e.Log())
		}
		return pod, id
	}
	run(0) // stays
	const churned = 10
	pods := map[int]*e2e.Pod{}
	for i := 1; i <= churned; i++ {
		pod, id := run(i)
		pods[i] = pod
		// Its init in its group: the event's work may outlast the adapter's budget on a busy
		// machine and finish in the background, so the group is waited for, not the answer.
		pid, err := ctrd.PID(id)
		if err != nil {
			t.Fatal(err)
		}
		if err := poll.Until(10*time.Second, func() error {
			if !slices.Contains(e.GroupTasks(group(i)), pid) {
				return os.ErrNotExist
			}
			return nil
		}); err != nil {
			t.Fatalf("pod %d was not given its group (it is %q):\n%s", i, e.StateOf(group(i)), e.Log())
		}
		// Its container is done; the sandbox stays: the pod's group is idle.
		if err := ctrd.Stop(id); err != nil {
			t.Fatal(err)
		}
		if err := poll.Until(10*time.Second, func() error {
			if e.StateOf(group(i)) != string(inventory.Idle) {
				return os.ErrNotExist
			}
			return nil
		}); err != nil {
			t.Fatalf("pod %d's group is %s once its only container stopped, want idle\n%s", i, e.StateOf(group(i)), e.Log())
		}
	}
	if !e.Exists(group(0)) {
		t.Errorf("the live pod lost its group\n%s", e.Log())
	}
	// 4 groups were free besides the live pod's: every pod after those took an idle one's,
	// the one idle longest, so the oldest churned pods lost theirs in order.
	counts := adapterCounts(t, e)
	if got := counts[vocab.OutcomeCount(vocab.SourceAdapter, vocab.Reclaimed)]; got != churned-4 {
		t.Errorf("adapter.reclaimed %d, want %d; counts %v\n%s", got, churned-4, counts, e.Log())
	}
	if got := counts[vocab.OutcomeCount(vocab.SourceAdapter, vocab.Pending)]; got != 0 {
		t.Errorf("%d pods pending while idle groups held RMIDs\n%s", got, e.Log())
	}
	for i := 1; i <= churned; i++ {
		reclaimed := i <= churned-4
		ends := 0
		for _, n := range e2e.LifeSnapshots(t, e.SnapDir, uid(i)) {
			if n.Kind == snapshot.End {
				ends++
			}
		}
		if reclaimed && (ends != 1 || e.Exists(group(i))) {
			t.Errorf("pod %d's reclaimed group: %d .end snapshots, still there %v", i, ends, e.Exists(group(i)))
		}
		if !reclaimed && (ends != 0 || !e.Exists(group(i))) {
			t.Errorf("pod %d's group, idle for less long than 4 others: %d .end snapshots, there %v", i, ends, e.Exists(group(i)))
		}
	}

	// Strict retention: the idle groups keep their RMIDs, the next pod waits; the adapter
	// reads its configuration at start.
	e.Config("rmidReclaim: none\n")
	stop()
	e2e.StartAdapter(t, e, ctrd.NRISocket)
	next := churned + 1
	_, id := run(next)
	if err := poll.Until(10*time.Second, func() error {
		if e.StateOf(group(next)) != string(inventory.Pending) {
			return os.ErrNotExist
		}
		return nil
	}); err != nil {
		t.Fatalf("under rmidReclaim: none, pod %d is %q, not pending:\n%s", next, e.StateOf(group(next)), e.Log())
	}
	// An idle pod is deleted: its RMID is free, and the pending pod takes it without an
	// event of its own (under a kubelet its container may never start again).
	oldest := churned - 3
	if err := ctrd.StopPod(pods[oldest].ID); err != nil {
		t.Fatal(err)
	}
	if err := ctrd.RemovePod(pods[oldest].ID); err != nil {
		t.Fatal(err)
	}
	pid, err := ctrd.PID(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := poll.Until(20*time.Second, func() error {
		// The group is made first (with limbo, once the freed RMID has left it).
		if !e.Exists(group(next)) || !slices.Contains(e.GroupTasks(group(next)), pid) {
			return os.ErrNotExist
		}
		return nil
	}); err != nil {
		t.Fatalf("pod %d was not completed once pod %d's RMID was free: state %s\n%s", next, oldest, e.StateOf(group(next)), e.Log())
	}
	if got := e.StateOf(group(next)); got != string(inventory.LateAssigned) {
		t.Errorf("pod %d is %s, want late-assigned (its container ran outside the group until an RMID was free)", next, got)
	}
}

// adapterCounts reads the outcome counts the front ends keep in the state directory.
func adapterCounts(t *testing.T, e *e2e.HookEnv) map[string]uint64 {
	t.Helper()
	st, err := registry.OpenReadOnly(e.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := st.Counts()
	if err != nil {
		t.Fatal(err)
	}
	return counts
}
