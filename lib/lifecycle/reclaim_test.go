package lifecycle

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/container"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// podN is the UID of the n-th pod of a churn test.
func podN(n int) string { return fmt.Sprintf("00000000-0000-0000-0000-%012d", n) }

// sbN is the sandbox id of the n-th pod.
func sbN(n int) string { return fmt.Sprintf("%064x", n+1) }

// A new container of a pod whose group expired while a task of the pod still ran in it (a
// process that outlived its poststop, a container the registry did not know): the task proves
// the pod lives, so the container joins that life, never fails for housekeeping.
func TestExpiredGroupWithTasksIsJoined(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, withConfig(func(c *config.Config) { c.Retention = config.Duration(time.Minute) }))
		group := "mon_groups/" + podA
		survivor := e.placed("c1", crio(podA, sbA)) // still running: its poststop came first
		e.stop("c1", crio(podA, sbA))
		rmid := e.rmid(group)
		e.now = e.now.Add(2 * time.Minute)
		out, err := e.create("c2", e.proc(), crio(podA, sbA))
		if err != nil || out.Action != vocab.Joined {
			t.Fatalf("a new container of a pod whose expired group holds its task: %+v, %v; want joined", out, err)
		}
		if !slices.Contains(e.tasks(group), survivor) || e.rmid(group) != rmid {
			t.Errorf("the pod's life was not kept: tasks %v, RMID %d (was %d)", e.tasks(group), e.rmid(group), rmid)
		}
		rec, _, _ := e.m.Store().Load(podA)
		if len(rec.Containers) != 1 || rec.IdleSince != nil || rec.RemoveFailed != "" {
			t.Errorf("record %+v: want the new container, not idle, no failed removal", rec)
		}
		if n := lifeSnapshots(t, e.cfg.SnapshotDir, podA); len(n) != 1 {
			t.Errorf("snapshots %v: want the one life's .begin, no .end", n)
		}
	})
}

// churn is a node of 6 RMIDs (5 groups) where pods come and go: each pod's container runs
// and ends, its group idle for the retention window (5m).
type churn struct {
	*env
	next int
}

func newChurn(t *testing.T, newEnv newEnvFunc, reclaim config.RMIDReclaim) *churn {
	e := newEnv(t, simOpts(resctrlsim.Options{NumRMIDs: 6}), withConfig(func(c *config.Config) { c.RMIDReclaim = reclaim }))
	return &churn{env: e}
}

// start places the first container of a new pod; it returns the pod's number, its init and
// what the placement said.
func (c *churn) start() (n, pid int, out Outcome, err error) {
	c.next++
	n, pid = c.next, c.proc()
	out, err = c.create(fmt.Sprintf("c%d", n), pid, crio(podN(n), sbN(n)))
	return n, pid, out, err
}

// end stops the pod's container: its group goes idle.
func (c *churn) end(n, pid int) {
	c.t.Helper()
	crash(c.t, pid)
	if o := c.stop(fmt.Sprintf("c%d", n), crio(podN(n), sbN(n))); o.Action != vocab.Idle {
		c.t.Fatalf("pod %d's stop: %+v", n, o)
	}
}

// With RMIDs reclaimed (the default), no new pod waits while an idle group holds an RMID: the
// group idle longest ends (its .end written, counted as reclaimed) and the new pod gets its
// RMID. Live groups are never reclaimed.
func TestNoPodWaitsWhileAnIdleGroupHoldsAnRMID(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		c := newChurn(t, newEnv, config.RMIDReclaimIdle)
		live := map[int]int{} // pod → init
		// Two pods stay; pods come and go around them, ten times the RMIDs.
		for range 2 {
			n, pid, out, err := c.start()
			if err != nil || out.Action != vocab.Created {
				t.Fatalf("pod %d: %+v, %v", n, out, err)
			}
			live[n] = pid
		}
		var idle []int // pods whose groups are idle, oldest first
		for i := range 50 {
			n, pid, out, err := c.start()
			if err != nil || out.Action != vocab.Created {
				t.Fatalf("churned pod %d (%d groups idle): %+v, %v; want created", n, len(idle), out, err)
			}
			if len(idle) == 3 {
				// The node was full: the oldest idle group made room, with its .end.
				oldest := idle[0]
				idle = idle[1:]
				if c.exists("mon_groups/" + podN(oldest)) {
					t.Fatalf("pod %d: the idle group of pod %d, idle longest, is still there", n, oldest)
				}
				if ends := slices.DeleteFunc(lifeSnapshots(t, c.cfg.SnapshotDir, podN(oldest)), func(s snapshot.Name) bool {
					return s.Kind != snapshot.End
				}); len(ends) != 1 {
					t.Errorf("the reclaimed group of pod %d has no .end snapshot", oldest)
				}
			}
			for _, o := range idle {
				if !c.exists("mon_groups/" + podN(o)) {
					t.Fatalf("pod %d: pod %d's group went before an older idle one", n, o)
				}
			}
			c.now = c.now.Add(time.Duration(i%3) * time.Second)
			c.end(n, pid)
			idle = append(idle, n)
		}
		for n := range live {
			if !c.exists("mon_groups/" + podN(n)) {
				t.Errorf("the live pod %d lost its group", n)
			}
		}
		counts, err := c.m.Store().Counts()
		if err != nil || counts[vocab.OutcomeCount(vocab.SourceOther, vocab.Reclaimed)] != 50-3 {
			t.Errorf("reclaimed counted %d times (%v), want %d", counts[vocab.OutcomeCount(vocab.SourceOther, vocab.Reclaimed)], err, 50-3)
		}
		if counts[vocab.OutcomeCount(vocab.SourceOther, vocab.Pending)] != 0 {
			t.Errorf("%d pods pending", counts[vocab.OutcomeCount(vocab.SourceOther, vocab.Pending)])
		}
	})
}

// With rmidReclaim: none, today's strict retention: an idle group keeps its RMID for the whole
// window and the new pod is pending.
func TestNoReclaimKeepsIdleGroups(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		c := newChurn(t, newEnv, config.RMIDReclaimNone)
		var idle []int
		for range 5 {
			n, pid, _, err := c.start()
			if err != nil {
				t.Fatal(err)
			}
			c.end(n, pid)
			idle = append(idle, n)
		}
		n, _, out, err := c.start()
		if !errors.Is(err, resctrlfs.ErrNoRMID) || out.Action != vocab.Pending {
			t.Fatalf("pod %d on a node of idle groups: %+v, %v; want pending", n, out, err)
		}
		for _, o := range idle {
			if !c.exists("mon_groups/" + podN(o)) {
				t.Errorf("the idle group of pod %d was ended", o)
			}
		}
	})
}

// An idle group that still holds a running task is never reclaimed: the task proves its pod
// lives. Groups of live containers are never reclaimed either.
func TestReclaimSparesGroupsWithTasks(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		c := newChurn(t, newEnv, config.RMIDReclaimIdle)
		for range 5 {
			n, pid, _, err := c.start()
			if err != nil {
				t.Fatal(err)
			}
			if n%2 == 0 {
				// Its poststop came before its process ended.
				c.stop(fmt.Sprintf("c%d", n), crio(podN(n), sbN(n)))
				continue
			}
			_ = pid
		}
		n, _, out, err := c.start()
		if !errors.Is(err, resctrlfs.ErrNoRMID) || out.Action != vocab.Pending {
			t.Fatalf("pod %d: %+v, %v; want pending (every group holds a running task)", n, out, err)
		}
		for o := 1; o <= 5; o++ {
			if !c.exists("mon_groups/" + podN(o)) {
				t.Errorf("the group of pod %d, which holds a running task, was ended", o)
			}
		}
	})
}

// The kernel's limbo (mkdir says EBUSY: the free RMIDs are still dirty) is not reclaimed
// from: another group's RMID would join the limbo too. The pod is pending, as before.
func TestLimboIsPending(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, simOpts(resctrlsim.Options{NumRMIDs: 3, LimboTime: time.Hour}))
		a, b := e.proc(), e.proc()
		for i, p := range []int{a, b} {
			if _, err := e.create(fmt.Sprintf("c%d", i), p, crio(podN(i), sbN(i))); err != nil {
				t.Fatal(err)
			}
		}
		crash(t, a)
		if out, err := e.m.EndPod(PodEnd{PodUID: podN(0), SandboxID: sbN(0)}); err != nil || out.Action != vocab.Removed {
			t.Fatalf("end pod 0: %+v, %v", out, err)
		}
		crash(t, b)
		e.stop("c1", crio(podN(1), sbN(1)))
		out, err := e.create("c2", e.proc(), crio(podN(2), sbN(2)))
		if !errors.Is(err, resctrlfs.ErrNoRMID) || out.Action != vocab.Pending {
			t.Fatalf("with the only free RMID in limbo: %+v, %v; want pending", out, err)
		}
		if !e.exists("mon_groups/" + podN(1)) {
			t.Errorf("an idle group was ended while the free RMID was in limbo")
		}
	})
}

// A pending pod is completed as soon as an RMID is free: the sweep after a pod's end
// (as the NRI adapter runs it) gives it its group, with its container's tasks in it.
func TestSweepCompletesPendingPods(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		c := newChurn(t, newEnv, config.RMIDReclaimIdle)
		var first int
		for range 5 {
			_, pid, _, err := c.start()
			if err != nil {
				t.Fatal(err)
			}
			first = cmp.Or(first, pid)
		}
		n, pid, out, err := c.start()
		if out.Action != vocab.Pending {
			t.Fatalf("pod %d on a full node of live pods: %+v, %v; want pending", n, out, err)
		}
		crash(t, first)
		if o, err := c.m.EndPod(PodEnd{PodUID: podN(1), SandboxID: sbN(1)}); err != nil || o.Action != vocab.Removed {
			t.Fatalf("end pod 1: %+v, %v", o, err)
		}
		if _, err := c.m.Sweep(); err != nil {
			t.Fatal(err)
		}
		group := "mon_groups/" + podN(n)
		if !c.exists(group) || !slices.Contains(c.tasks(group), pid) {
			t.Fatalf("the pending pod %d after a pod ended and a sweep: group there %v", n, c.exists(group))
		}
		rec, _, _ := c.m.Store().Load(podN(n))
		if rec.Pending != "" || !rec.LateAssigned {
			t.Errorf("record %+v: want not pending, late-assigned", rec)
		}
		counts, _ := c.m.Store().Counts()
		if counts[vocab.OutcomeCount(vocab.SourceOther, vocab.Completed)] != 1 {
			t.Errorf("completed counted %d times", counts[vocab.OutcomeCount(vocab.SourceOther, vocab.Completed)])
		}
	})
}

// Reconcile, giving a live pod that has no group its group on a node full of idle groups,
// reclaims the one idle longest, and says so among its steps.
func TestReconcileReclaims(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		c := newChurn(t, newEnv, config.RMIDReclaimIdle)
		for range 5 {
			n, pid, _, err := c.start()
			if err != nil {
				t.Fatal(err)
			}
			c.end(n, pid)
			c.now = c.now.Add(time.Second)
		}
		in := c.hold(0)
		in.release()
		idn := identity.Identity{Runtime: identity.NRI, PodUID: podN(9), SandboxID: sbN(9), Namespace: "default", PodName: "late"}
		acts, err := c.m.Reconcile([]container.Container{{ID: "c9", Pid: in.Pid, Pod: &idn}}, ReconcileOptions{})
		if err != nil || len(acts) != 2 || acts[0].Action != vocab.Reclaimed || acts[0].Group != "mon_groups/"+podN(1) || acts[1].Action != vocab.Created {
			t.Fatalf("reconcile: %+v, %v; want pod 1's group reclaimed, then pod 9's created", acts, err)
		}
		if !slices.Contains(c.tasks("mon_groups/"+podN(9)), in.Pid) {
			t.Errorf("pod 9's container is not in its group")
		}
		if acts, err := c.m.Reconcile([]container.Container{{ID: "c9", Pid: in.Pid, Pod: &idn}}, ReconcileOptions{}); err != nil || len(acts) != 0 {
			t.Errorf("second reconcile: %+v, %v", acts, err)
		}
	})
}
