package nri_test

import (
	"os"
	"path/filepath"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestNRIContainerdRealRunc: a real containerd 2.4.2 whose runc runtime is the real runc
// 1.5.1 through test/e2e/rdtshim, an NRI plugin of the test's (index 05, before the
// adapter's 90) that sets linux.intelRdt enableMonitoring on every container (in the class
// "gold", made before, or the root class by name, "/"), and the adapter: runc makes its own
// group <class>/mon_groups/<container id> and writes its bootstrap there, the adapter places
// each forker container of a pod in the pod's group, every task of it, and removes runc's
// group, saying so, for the first container (created) and the second (joined); after the pod
// is removed nothing is left: no group under the class, no registry entry.
//
// The simulator cannot see the init inherit runc's group (see test/README.md, rdtshim): the
// plugin adds `classhook -inherit` as the first createRuntime hook, standing in for the
// kernel, as the OCI hook tests with the real runc do.
func TestNRIContainerdRealRunc(t *testing.T) {
	for _, c := range e2e.RDTClasses {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\nfailurePolicy: closed\n")
			e.MakeClass(t, c)
			// Before containerd: its check that no supervisor of the shim outlived the
			// containers runs after containerd's cleanup has removed them.
			r := e2e.NewRDTRunc(t, e.Sim.Dir)
			ctrd := e2e.StartContainerd(t, e2e.ContainerdOptions{Rootfs: e.Rootfs, Runc: r.Wrapper(t)})
			e2e.StartRDTPlugin(t, ctrd.NRISocket, c.ClosID,
				specs.Hook{Path: e2e.Binaries.ClassHook, Args: []string{"classhook", "-inherit", e.Sim.Dir}, Timeout: e2e.IntPtr(10)})
			e2e.StartAdapter(t, e, ctrd.NRISocket)
			group := c.Dir + "mon_groups/" + e2e.PodUIDA

			pod, err := ctrd.RunPod(e2e.PodSpec{Name: "realrunc", Namespace: "e2e", UID: e2e.PodUIDA, Kubelet: true})
			if err != nil {
				t.Fatal(err)
			}
			for i, name := range []string{"app", "sidecar"} {
				faked := r.Faked()
				ids := e2e.RunForkers(t, e, ctrd.CRI, pod, name)
				id := ids[name]
				// What runc was given: the plugin's linux.intelRdt, through containerd.
				if _, spec, err := ctrd.BundleSpec(id); err != nil {
					t.Fatal(err)
				} else if rdt := spec.Linux.IntelRdt; rdt == nil || !rdt.EnableMonitoring || rdt.ClosID != c.ClosID {
					t.Fatalf("%s: the spec's linux.intelRdt is %+v, want closID %q with enableMonitoring", name, rdt, c.ClosID)
				}
				// runc applied it on the simulator (its statfs of /sys/fs/resctrl was
				// answered), not ignored it.
				if r.Faked() == faked {
					t.Errorf("%s: runc never looked at /sys/fs/resctrl through the shim:\n%s", name, r.Log())
				}
				e.WantForkersPlaced(t, ctrd.CRI, group, ids)
				own := c.Dir + "mon_groups/" + id
				if e.Exists(own) {
					t.Errorf("%s: runc's own group %s is still there after the adapter placed it\n%s", name, own, e.Log())
				}
				outcome := []string{"outcome=created", "outcome=joined"}[i]
				if n := e.LogLines("msg=placed", "event=StartContainer", "id="+id, outcome, "group="+group, "the runtime's group "+own+" removed"); n != 1 {
					t.Errorf("%s: %d log lines of its placement (%s) saying runc's group %s was removed, want 1:\n%s", name, n, outcome, own, e.Log())
				}
			}

			e.EndCRIPod(t, ctrd.CRI, pod.ID, group)
			if es, err := os.ReadDir(filepath.Join(e.Sim.Dir, c.Dir, "mon_groups")); err != nil || len(es) != 0 {
				t.Errorf("%smon_groups holds %v (%v) after the pod, want nothing", c.Dir, es, err)
			}
		})
	}
}

// TestNRIContainerdRealRuncWithoutClosID: the plugin sets enableMonitoring and no closID, so
// the real runc 1.5.1 makes a class per container, named by its id, with its group
// <id>/mon_groups/<id>: the adapter places the pod's first container in
// <id>/mon_groups/<uid> and removes runc's group. The pod's second container is in a class
// of its own and is refused (fail-closed: containerd does not start it): one group cannot
// span classes. After the pod nothing of resctrl-mon's is left; the classes are runc's, and
// runc 1.5.1's delete (containerd's shim calls it in a process of its own) leaves them.
func TestNRIContainerdRealRuncWithoutClosID(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\nfailurePolicy: closed\n")
	r := e2e.NewRDTRunc(t, e.Sim.Dir)
	ctrd := e2e.StartContainerd(t, e2e.ContainerdOptions{Rootfs: e.Rootfs, Runc: r.Wrapper(t)})
	e2e.StartRDTPlugin(t, ctrd.NRISocket, "",
		specs.Hook{Path: e2e.Binaries.ClassHook, Args: []string{"classhook", "-inherit", e.Sim.Dir}, Timeout: e2e.IntPtr(10)})
	e2e.StartAdapter(t, e, ctrd.NRISocket)

	pod, err := ctrd.RunPod(e2e.PodSpec{Name: "realrunc", Namespace: "e2e", UID: e2e.PodUIDA, Kubelet: true})
	if err != nil {
		t.Fatal(err)
	}
	ids := e2e.RunForkers(t, e, ctrd.CRI, pod, "app")
	id := ids["app"]
	group, own := id+"/mon_groups/"+e2e.PodUIDA, id+"/mon_groups/"+id
	e.WantForkersPlaced(t, ctrd.CRI, group, ids)
	if e.Exists(own) {
		t.Errorf("runc's own group %s is still there after the adapter placed it\n%s", own, e.Log())
	}
	if n := e.LogLines("msg=placed", "event=StartContainer", "id="+id, "outcome=created", "group="+group, "the runtime's group "+own+" removed"); n != 1 {
		t.Errorf("%d log lines of the placement saying runc's group %s was removed, want 1:\n%s", n, own, e.Log())
	}

	second, err := ctrd.RunContainer(pod, e2e.TestImage, e2e.ContainerSpec{Name: "sidecar", Command: []string{"forker"}})
	if err == nil {
		t.Fatalf("a second container of the pod in a class of its own started; want it refused (fail-closed)\n%s", e.Log())
	}
	t.Logf("the second container: %v", err)
	if n := e.LogLines("event=StartContainer", "id="+second, "a group cannot span classes"); n != 1 {
		t.Errorf("the second container's start failed (%v), but not for the class: %d log lines of the refusal\n%s", err, n, e.Log())
	}

	e.EndCRIPod(t, ctrd.CRI, pod.ID, group)
	for _, class := range []string{id, second} {
		if !e.Exists(class) {
			t.Errorf("the class %s is gone: runc 1.5.1's delete leaves it (did runc change?)", class)
			continue
		}
		if es, err := os.ReadDir(filepath.Join(e.Sim.Dir, class, "mon_groups")); err != nil || len(es) != 0 {
			t.Errorf("%s/mon_groups holds %v (%v) after the pod, want nothing", class, es, err)
		}
	}
}
