package hook_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// The tests here run the real runc 1.5.1 of the test cache with linux.intelRdt applied on
// the simulator, through test/e2e/rdtshim (runc's statfs of /sys/fs/resctrl is answered as
// resctrl's, and the simulator is mounted there in runc's mount namespace): runc's own
// intelrdt code makes the class and its group <class>/mon_groups/<container id> and writes
// its bootstrap process there, where the other hook tests use classhook as the runtime.

// TestRDTShimRuncMakesItsGroup: through the shim, runc ≥ 1.4 itself applies enableMonitoring
// on the simulator, no resctrl-mon hook anywhere: before the container starts, its group
// <class>/mon_groups/<id> is there (and, without a closID, the class <id> it made), it
// writes tasks on the simulator (a failed write fails the create with runc's words), and
// removes its group at delete. Without the shim the same runc refuses the spec (this host
// has no RDT): what the shim makes possible.
func TestRDTShimRuncMakesItsGroup(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	if err := os.Mkdir(filepath.Join(e.Sim.Dir, "gold"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := e2e.NewRDTRunc(t, e.Sim.Dir)
	gold := specs.LinuxIntelRdt{ClosID: "gold", EnableMonitoring: true}
	b := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"forker"}, IntelRdt: &gold})
	if err := r.Plain.Run("shim-plain", b); err == nil || !strings.Contains(err.Error(), "Intel RDT is not enabled") {
		t.Fatalf("runc without the shim: %v, want it to refuse linux.intelRdt (Intel RDT is not enabled)", err)
	}

	for _, c := range []struct{ name, closID string }{{"gold", "gold"}, {"no-closid", ""}} {
		id := "shim-" + c.name
		class := c.closID
		if class == "" {
			class = id
		}
		own := class + "/mon_groups/" + id
		rdt := specs.LinuxIntelRdt{ClosID: c.closID, EnableMonitoring: true}
		b := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"forker"}, IntelRdt: &rdt})
		faked := r.Faked()
		if err := r.Create(id, b); err != nil {
			t.Fatalf("%s: %v\nsupervisors:\n%s", c.name, err, r.Log())
		}
		if r.Faked() == faked {
			t.Errorf("%s: no statfs of /sys/fs/resctrl answered by the shim:\n%s", c.name, r.Log())
		}
		if !e.Exists(own) {
			t.Errorf("%s: runc made no group %s", c.name, own)
		}
		if err := r.Start(id); err != nil {
			t.Fatal(err)
		}
		e2e.WaitReady(t, b)
		if err := r.Delete(id, true); err != nil {
			t.Fatal(err)
		}
		if e.Exists(own) {
			t.Errorf("%s: runc's group %s outlived the container", c.name, own)
		}
		// runc 1.5.1 removes a class it made only in the process that made it (Destroy's
		// shouldCleanupDir, set by Apply): `runc delete` is another, and leaves it.
		if !e.Exists(class) {
			t.Errorf("%s: the class %s is gone after delete; runc 1.5.1 leaves it (see docs/operations/troubleshooting.md)", c.name, class)
		}
	}

	// runc's write of its process into the class's tasks meets the simulator's fault.
	e.Sim.FailNext(resctrlsim.OpTasksWrite, 1, syscall.EIO)
	b = e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"forker"}, IntelRdt: &gold})
	if err := r.Run("shim-fault", b); err == nil || !strings.Contains(err.Error(), "intelrdt: unable to add pid") {
		t.Errorf("runc with a failing tasks write: %v, want runc's intelrdt error", err)
	}
	if es, err := os.ReadDir(filepath.Join(e.Sim.Dir, "gold", "mon_groups")); err != nil || len(es) != 0 {
		t.Errorf("gold/mon_groups holds %v (%v), want nothing", es, err)
	}
}

// realRuncHooks are the hooks of a container run by the real runc through the shim: the
// classhook in -inherit mode first (the kernel's inheritance of runc's group by the init,
// which the simulator cannot see), then resctrl-mon's.
func realRuncHooks(e *e2e.HookEnv) *specs.Hooks {
	hooks := e.Hooks()
	hooks.CreateRuntime = append([]specs.Hook{{Path: e2e.Binaries.ClassHook, Args: []string{"classhook", "-inherit", e.Sim.Dir}, Timeout: e2e.IntPtr(10)}},
		hooks.CreateRuntime...)
	return hooks
}

// TestHookRealRuncRemovesItsGroup: the real runc 1.5.1 (through the shim) applies
// enableMonitoring, and resctrl-mon's hook places a pod's first container (the worker) and
// its second (a join) in the pod's group, with every task of each, removes runc's own group
// of each and says so; after the deletes nothing of the pod is left. The classes: "gold"
// (made before), and the root by name ("/", runtime-spec 1.3).
func TestHookRealRuncRemovesItsGroup(t *testing.T) {
	for _, c := range e2e.RDTClasses {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\nfailurePolicy: closed\n")
			e.MakeClass(t, c)
			r := e2e.NewRDTRunc(t, e.Sim.Dir)
			group := c.Dir + "mon_groups/" + e2e.PodUIDA
			for i, id := range []string{"realrunc-first", "realrunc-second"} {
				rdt := specs.LinuxIntelRdt{ClosID: c.ClosID, EnableMonitoring: true}
				b := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"forker"}, IntelRdt: &rdt,
					Annotations: e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), fmt.Sprintf("app%d", i)), Hooks: realRuncHooks(e)})
				if err := r.Run(id, b); err != nil {
					t.Fatalf("%s: %v\n%s", id, err, e.Log())
				}
				e2e.WaitReady(t, b)
				if missing, total := e.Outside(r.Runtime, id, group); missing != 0 || total < 12 {
					t.Errorf("%s: %d of %d tasks outside %s\n%s", id, missing, total, group, e.Log())
				}
				own := c.Dir + "mon_groups/" + id
				if e.Exists(own) {
					t.Errorf("%s: runc's own group %s is still there after the hook\n%s", id, own, e.Log())
				}
				outcome := []string{"outcome=created", "outcome=joined"}[i]
				if n := e.LogLines("container="+id, outcome, "group="+group, "the runtime's group "+own+" removed"); n != 1 {
					t.Errorf("%s: no log line of the placement (%s) saying runc's group was removed:\n%s", id, outcome, e.Log())
				}
			}
			for _, id := range []string{"realrunc-second", "realrunc-first"} {
				if err := r.Delete(id, true); err != nil {
					t.Fatal(err)
				}
			}
			if es, err := os.ReadDir(filepath.Join(e.Sim.Dir, c.Dir, "mon_groups")); err != nil || len(es) != 0 {
				t.Errorf("%smon_groups holds %v (%v), want nothing", c.Dir, es, err)
			}
			if recs := e.Records(); len(recs) != 0 {
				t.Errorf("registry entries left: %+v", recs)
			}
		})
	}
}

// TestHookRealRuncWithoutClosID: enableMonitoring without a closID: the real runc 1.5.1
// makes a class named by the container's id, <id>, and its group <id>/mon_groups/<id>; the
// hook places the container in <id>/mon_groups/<uid> and removes runc's group. A second
// container of the pod is in a class of its own and is refused (fail-closed): one group
// cannot span classes. After the delete the pod's group is gone, and the class <id>, runc's,
// is left empty by runc's delete (it removes a class it made only in the process that
// made it), not by resctrl-mon, which never removes a class.
func TestHookRealRuncWithoutClosID(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\nfailurePolicy: closed\n")
	r := e2e.NewRDTRunc(t, e.Sim.Dir)
	id := "realrunc-noclos"
	rdt := specs.LinuxIntelRdt{EnableMonitoring: true}
	b := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"forker"}, IntelRdt: &rdt,
		Annotations: e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app"), Hooks: realRuncHooks(e)})
	if err := r.Run(id, b); err != nil {
		t.Fatalf("%v\n%s", err, e.Log())
	}
	e2e.WaitReady(t, b)
	group, own := id+"/mon_groups/"+e2e.PodUIDA, id+"/mon_groups/"+id
	if missing, total := e.Outside(r.Runtime, id, group); missing != 0 || total < 12 {
		t.Errorf("%d of %d tasks outside %s\n%s", missing, total, group, e.Log())
	}
	if e.Exists(own) {
		t.Errorf("runc's own group %s is still there after the hook\n%s", own, e.Log())
	}
	if n := e.LogLines("container="+id, "outcome=created", "group="+group, "the runtime's group "+own+" removed"); n != 1 {
		t.Errorf("no log line of the placement saying runc's group was removed:\n%s", e.Log())
	}

	second := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"forker"}, IntelRdt: &rdt,
		Annotations: e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "sidecar"), Hooks: realRuncHooks(e)})
	err := r.Run(id+"-2", second)
	if err == nil || !strings.Contains(err.Error(), "a group cannot span classes") {
		t.Errorf("a second container of the pod in a class of its own: %v, want refused (fail-closed) for the class", err)
	}
	// The create that failed is the process that made the class: runc's Destroy removes it.
	if e.Exists(id + "-2") {
		t.Errorf("the class %s-2 of the refused container was left behind", id)
	}

	if err := r.Delete(id, true); err != nil {
		t.Fatal(err)
	}
	if e.Exists(group) {
		t.Errorf("the pod's group outlived the pod (retention 0)\n%s", e.Log())
	}
	if es, err := os.ReadDir(filepath.Join(e.Sim.Dir, id, "mon_groups")); err != nil || len(es) != 0 {
		t.Errorf("%s/mon_groups holds %v (%v), want nothing", id, es, err)
	}
	if !e.Exists(id) {
		t.Errorf("the class %s is gone: runc 1.5.1's delete leaves it (did runc change?)", id)
	}
	if recs := e.Records(); len(recs) != 0 {
		t.Errorf("registry entries left: %+v", recs)
	}
}
