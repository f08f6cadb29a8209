package lifecycle

import (
	"maps"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/container"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
)

// The hook's front end: a container's name is the one its runtime put in the spec's
// annotations (CRI-O copies kubelet's io.kubernetes.container.name label, containerd sets
// io.kubernetes.cri.container-name from the CRI metadata: lib/identity/testdata), recorded
// beside its cgroup; a container with none (runc, podman) is recorded without one.
func TestPlaceRecordsContainerName(t *testing.T) {
	t.Parallel()
	e := newEnv(t, bareFake(8))
	containerd := func(name string) map[string]string {
		return map[string]string{identity.ContainerdPodUID: podA, identity.ContainerdSandboxID: sbA, identity.ContainerdContainerType: "container",
			identity.ContainerdPodNamespace: "default", identity.ContainerdPodName: "web", identity.ContainerdContainerName: name}
	}
	e.placed("c-app", containerd("app"))
	e.placed("c-side", containerd("sidecar"))
	e.placed("c-crio", withCRIOName(crio(podB, strings.Repeat("b", 64)), "app"))
	e.placed("plain", map[string]string{})

	for group, want := range map[string]map[string]string{
		podA:                      {"c-app": "app", "c-side": "sidecar"},
		podB:                      {"c-crio": "app"},
		containerPrefix + "plain": nil,
	} {
		rec, ok, err := e.m.Store().Load(group)
		if err != nil || !ok {
			t.Fatalf("record of %s: %v, %v", group, ok, err)
		}
		if !maps.Equal(rec.Names, want) {
			t.Errorf("%s: names %v, want %v", group, rec.Names, want)
		}
	}

	// A container's departure takes its name with it.
	e.stop("c-side", containerd("sidecar"))
	if rec, _, _ := e.m.Store().Load(podA); !maps.Equal(rec.Names, map[string]string{"c-app": "app"}) {
		t.Errorf("after c-side left: names %v", rec.Names)
	}
}

// Reconcile records the names of the containers it finds (from the annotations of a hook's
// runtime, or as an NRI runtime gives them), also for containers recorded without one (by a
// version that kept none), and a second run changes nothing.
func TestReconcileRecordsContainerNames(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t)
		// Each in a cgroup of its own, as containers are: reconcile moves a cgroup's tasks.
		hold := func() int { in := e.hold(0); in.release(); return in.Pid }
		pid := hold()
		idn := identity.Identity{Runtime: identity.NRI, PodUID: podA, SandboxID: sbA, Namespace: "default", PodName: "web"}
		if _, err := e.m.Place(Placement{ContainerID: "c1", Pid: pid, Pod: idn}); err != nil {
			t.Fatal(err)
		}
		if rec, _, _ := e.m.Store().Load(podA); len(rec.Names) != 0 {
			t.Fatalf("names %v before reconcile", rec.Names)
		}
		named := idn
		named.ContainerName = "app"
		other := hold()
		hookAnn := withCRIOName(crio(podB, strings.Repeat("b", 64)), "db")
		live := []container.Container{{ID: "c1", Pid: pid, Pod: &named}, {ID: "c2", Pid: other, Annotations: hookAnn}}
		if _, err := e.m.Reconcile(live, ReconcileOptions{}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		for group, want := range map[string]map[string]string{podA: {"c1": "app"}, podB: {"c2": "db"}} {
			if rec, _, _ := e.m.Store().Load(group); !maps.Equal(rec.Names, want) {
				t.Errorf("%s: names %v, want %v", group, rec.Names, want)
			}
		}
		if acts, err := e.m.Reconcile(live, ReconcileOptions{}); err != nil || len(acts) != 0 {
			t.Errorf("second reconcile: %+v, %v", acts, err)
		}
	})
}

func withCRIOName(a map[string]string, name string) map[string]string {
	a = maps.Clone(a)
	a[identity.CRIOContainerName] = name
	return a
}
