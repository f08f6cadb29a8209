package lifecycle

import (
	"slices"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/container"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// What front ends other than the hook need: the NRI adapter runs beside hooks on one node,
// gets two departures per container, is sometimes told of a container only after it started,
// and knows pods from the runtime's PodSandbox rather than annotations.

// The hook and the adapter both place a container: it is one container in one group, with
// one RMID and one .begin.
func TestPlaceTwiceIsOnePlacement(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t)
		p := e.proc()
		group := "mon_groups/" + podA
		first, err := e.create("c1", p, crio(podA, sbA))
		if err != nil || first.Action != vocab.Created {
			t.Fatalf("first: %+v, %v", first, err)
		}
		rmid := e.rmid(group)
		again, err := e.m.Place(Placement{ContainerID: "c1", Pid: p, Pod: identity.Identity{Runtime: identity.NRI, PodUID: podA, SandboxID: sbA,
			Namespace: "default", PodName: "web"}})
		if err != nil || again.Action != vocab.Joined || again.Detail == "" {
			t.Fatalf("second placement of the same init: %+v, %v; want joined, saying it was placed already", again, err)
		}
		rec, ok, err := e.m.Store().Load(podA)
		if err != nil || !ok || len(rec.Containers) != 1 || len(rec.Inits) != 1 {
			t.Fatalf("record %+v (%v, %v): want one container", rec, ok, err)
		}
		if e.rmid(group) != rmid {
			t.Errorf("the RMID changed")
		}
		if n := lifeSnapshots(t, e.cfg.SnapshotDir, podA); len(n) != 1 {
			t.Errorf("snapshots %v, want one .begin", n)
		}
		// A new init under the same id (a container re-created) is not "already placed".
		p2 := e.proc()
		out, err := e.create("c1", p2, crio(podA, sbA))
		if err != nil || out.Detail != "" {
			t.Errorf("a new init of the same container: %+v, %v", out, err)
		}
	})
}

// A container whose pid came only after it started: every task of its cgroup is moved and
// the pod is marked late-assigned.
func TestLatePlacementMovesTheWholeCgroup(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t)
		in := e.hold(2)
		in.release()
		out, err := e.m.Place(Placement{ContainerID: "c1", Pid: in.Pid, Pod: identity.Identity{Runtime: identity.NRI, PodUID: podA, SandboxID: sbA}, Late: true})
		if err != nil || out.Action != vocab.Created {
			t.Fatalf("late placement: %+v, %v", out, err)
		}
		want := in.tasks()
		got := e.tasks("mon_groups/" + podA)
		for _, tid := range want {
			if !slices.Contains(got, tid) {
				t.Errorf("task %d of the container's cgroup is not in the group (group %v, cgroup %v)", tid, got, want)
			}
		}
		if len(want) < 3 {
			t.Errorf("the cgroup holds %v: the workload did not fork", want)
		}
		if rec, _, _ := e.m.Store().Load(podA); !rec.LateAssigned {
			t.Errorf("record not marked late-assigned: %+v", rec)
		}
		// Placed on time, a pod is not late.
		p := e.proc()
		if _, err := e.m.Place(Placement{ContainerID: "c2", Pid: p, Pod: identity.Identity{Runtime: identity.NRI, PodUID: podB, SandboxID: sbB}}); err != nil {
			t.Fatal(err)
		}
		if rec, _, _ := e.m.Store().Load(podB); rec.LateAssigned {
			t.Errorf("a pod placed on time is marked late-assigned")
		}
	})
}

// NRI sends StopContainer and then RemoveContainer: the second departure does not restart
// the retention clock.
func TestSecondDepartureKeepsTheIdleClock(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, withConfig(func(c *config.Config) { c.Retention = config.Duration(time.Minute) }))
		p := e.placed("c1", crio(podA, sbA))
		crash(t, p)
		e.stop("c1", crio(podA, sbA))
		e.now = e.now.Add(40 * time.Second)
		if o := e.stop("c1", crio(podA, sbA)); o.Action != vocab.Idle {
			t.Fatalf("second departure: %+v", o)
		}
		e.now = e.now.Add(30 * time.Second)
		if removed, err := e.m.Sweep(); err != nil || len(removed) != 1 {
			t.Fatalf("sweep 70s after the first departure: removed %v, %v; want the group", removed, err)
		}
	})
}

// A front end that knows the pod from its runtime (NRI) gives reconcile the identity: no
// annotation is read, and the pod's sandbox is not placed.
func TestReconcileWithGivenIdentity(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t)
		in := e.hold(0)
		in.release()
		sandbox := e.hold(0)
		idn := identity.Identity{Runtime: identity.NRI, PodUID: podA, SandboxID: sbA, Namespace: "default", PodName: "web"}
		sbIdn := idn
		sbIdn.Sandbox = true
		live := []container.Container{{ID: "c1", Pid: in.Pid, Pod: &idn}, {ID: sbA, Pid: sandbox.Pid, Pod: &sbIdn}}
		acts, err := e.m.Reconcile(live, ReconcileOptions{})
		if err != nil || len(acts) != 1 || acts[0].Action != vocab.Created {
			t.Fatalf("reconcile: %+v, %v", acts, err)
		}
		got := e.tasks("mon_groups/" + podA)
		if !slices.Contains(got, in.Pid) || slices.Contains(got, sandbox.Pid) {
			t.Errorf("group tasks %v: want %d, not the sandbox's %d", got, in.Pid, sandbox.Pid)
		}
		if acts, err := e.m.Reconcile(live, ReconcileOptions{}); err != nil || len(acts) != 0 {
			t.Errorf("second reconcile: %+v, %v", acts, err)
		}
	})
}
