package lifecycle

import (
	"slices"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/container"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// peersGroup makes the group another tool makes for a pod: the nri-plugins resctrl-mon plugin
// names it by the pod's lowercase dashed UID, as we do, and puts the pod's tasks in it.
func (e *env) peersGroup(uid string, pid int) string {
	e.t.Helper()
	g := "mon_groups/" + uid
	e.mkdir(g)
	e.writeTask(g, pid)
	return g
}

// A group we did not make is never touched, even when it has our name and holds the pod's
// tasks (the nri-plugins peer's group; ours after a lost state dir looks the same): reconcile
// refuses it while the pod runs, and leaves it when the pod is gone. Only `reconcile --adopt`,
// the operator's word that such groups are ours, takes them.
func TestReconcileLeavesPeersGroup(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, withConfig(func(c *config.Config) { c.Retention = 0 }))
		in := e.hold(0)
		in.release()
		g := e.peersGroup(podA, in.Pid)
		idn := identity.Identity{Runtime: identity.NRI, PodUID: podA, SandboxID: sbA, Namespace: "default", PodName: "web"}
		live := []container.Container{{ID: "c1", Pid: in.Pid, Pod: &idn}}
		for range 2 {
			acts, err := e.m.Reconcile(live, ReconcileOptions{})
			if err != nil || len(acts) != 1 || acts[0].Action != vocab.Refused {
				t.Errorf("reconcile with the peer's group: %+v, %v; want it refused", acts, err)
			}
		}
		if _, owned, _ := e.m.store.Load(podA); owned {
			t.Errorf("the peer's group was recorded as ours")
		}
		in.kill()
		if acts, err := e.m.Reconcile(nil, ReconcileOptions{}); err != nil || len(acts) != 0 {
			t.Errorf("reconcile after the pod ended: %+v, %v; want nothing done", acts, err)
		}
		if !e.exists(g) {
			t.Errorf("the peer's group was removed")
		}
	})
}

// After the state dir is lost, `reconcile --adopt` takes back a group that holds its pod's
// tasks, and only such a group; it is then ours to end.
func TestReconcileAdopt(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, withConfig(func(c *config.Config) { c.Retention = 0 }))
		in := e.hold(0)
		in.release()
		g := e.peersGroup(podA, in.Pid)
		other := e.proc()
		gB := e.peersGroup(podB, other) // holds none of its pod's tasks
		pod := func(uid, sb string) *identity.Identity {
			return &identity.Identity{Runtime: identity.NRI, PodUID: uid, SandboxID: sb, Namespace: "default", PodName: "web"}
		}
		b := e.hold(0)
		b.release()
		live := []container.Container{{ID: "c1", Pid: in.Pid, Pod: pod(podA, sbA)}, {ID: "c2", Pid: b.Pid, Pod: pod(podB, sbB)}}
		acts, err := e.m.Reconcile(live, ReconcileOptions{Adopt: true})
		if err != nil || !slices.ContainsFunc(acts, func(s Step) bool { return s.Action == vocab.Adopted && s.Group == g }) ||
			!slices.ContainsFunc(acts, func(s Step) bool { return s.Action == vocab.Refused && s.Group == gB }) {
			t.Fatalf("reconcile --adopt: %+v, %v; want %s adopted, %s refused", acts, err, g, gB)
		}
		if acts, err := e.m.Reconcile(live, ReconcileOptions{}); err != nil || len(acts) != 1 || acts[0].Group != gB {
			t.Errorf("second reconcile: %+v, %v; want only %s refused again", acts, err, gB)
		}
		in.kill()
		if _, err := e.m.Reconcile(live[1:], ReconcileOptions{}); err != nil {
			t.Fatal(err)
		}
		if e.exists(g) {
			t.Errorf("the adopted group outlived its pod")
		}
	})
}
