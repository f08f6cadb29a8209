package hook_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestHookAllocationClass: a container whose config.json puts it in the allocation
// class "gold" gets its pod's group under gold/mon_groups/, with every task of the container
// in it; a container of the same pod outside the class, and one the runtime did not put in
// its class, are refused with a clear reason (fail-closed here), and the class itself, not
// ours, outlives the pod.
//
// runc 1.1 applies linux.intelRdt only on a host with RDT allocation (CAT or MBA; otherwise it
// ignores it) and crun 1.8 has no RDT support, so the test's classhook, run as the first
// createRuntime hook, does the runtime's part by its rules: the init's leader into gold/tasks.
func TestHookAllocationClass(t *testing.T) {
	for _, rt := range []string{"runc", "crun"} {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			testAllocationClass(t, rt)
		})
	}
}

func testAllocationClass(t *testing.T, rt string) {
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\nfailurePolicy: closed\n")
	// The class exists before any container: made by an allocation plugin or the admin.
	if err := os.Mkdir(filepath.Join(e.Sim.Dir, "gold"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := e2e.PreparedRuntime(t, rt)
	hooks := e.Hooks()
	classed := &specs.Hooks{
		CreateRuntime: append([]specs.Hook{{Path: e2e.Binaries.ClassHook, Args: []string{"classhook", e.Sim.Dir}, Timeout: e2e.IntPtr(10)}}, hooks.CreateRuntime...),
		Poststop:      hooks.Poststop,
	}
	app := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"forker"}, ClosID: "gold",
		Annotations: e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app"), Hooks: classed})
	if err := r.Run(rt+"-class-app", app); err != nil {
		t.Fatalf("%v\n%s", err, e.Log())
	}
	e2e.WaitReady(t, app)
	group := "gold/mon_groups/" + e2e.PodUIDA
	if missing, total := e.Outside(r, rt+"-class-app", group); missing != 0 || total < 12 {
		t.Errorf("%d of %d tasks outside %s\n%s", missing, total, group, e.Log())
	}
	if e.Exists("mon_groups/" + e2e.PodUIDA) {
		t.Errorf("a group of the pod under the root class too")
	}
	if n := e.LogLines("container="+rt+"-class-app", "group="+group, "outcome=created"); n != 1 {
		t.Errorf("no log line of the classed container's placement:\n%s", e.Log())
	}
	// runc's init is a Go program with several threads, of which runc moved only the leader
	// into the class; the others, which end at execve, are refused for the class's group by
	// the kernel and left, and the log says so. crun's init is one thread.
	if n := e.LogLines("container="+rt+"-class-app", "threads outside class gold left"); rt == "runc" && n != 1 {
		t.Errorf("the init's other threads are not reported as left:\n%s", e.Log())
	}

	// The same pod, outside the class: one group cannot span classes.
	plain := e.Bundle(e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "sidecar"))
	err := r.Run(rt+"-class-sidecar", plain)
	if err == nil || !strings.Contains(err.Error(), "a group cannot span classes") {
		t.Errorf("a container of the pod outside its class: %v, want refused (fail-closed) for the class", err)
	}
	if n := e.LogLines("container="+rt+"-class-sidecar", "outcome=refused", "allocation class mismatch"); n != 1 {
		t.Errorf("the refusal is not logged:\n%s", e.Log())
	}

	// A runtime that did not apply the class (no classhook here): the init is not where its
	// spec says, the hook says so, and the group it made for it does not stay behind.
	unapplied := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"forker"}, ClosID: "gold",
		Annotations: e2e.CRIOPod(e2e.PodUIDB, e2e.SandboxOf('b'), "app"), Hooks: hooks})
	err = r.Run(rt+"-class-unapplied", unapplied)
	if err == nil || !strings.Contains(err.Error(), "did the runtime apply linux.intelRdt?") {
		t.Errorf("a container the runtime did not put in its class: %v, want refused (fail-closed) saying why", err)
	}
	if e.Exists("gold/mon_groups/" + e2e.PodUIDB) {
		t.Errorf("the group made for the unplaced container was left behind")
	}

	if err := r.Delete(rt+"-class-app", true); err != nil {
		t.Fatal(err)
	}
	if e.Exists(group) {
		t.Errorf("the group outlived the pod (retention 0)\n%s", e.Log())
	}
	if !e.Exists("gold") {
		t.Errorf("the class gold, not ours, is gone")
	}
	if recs := e.Records(); len(recs) != 0 {
		t.Errorf("registry entries left: %+v", recs)
	}
}

// TestHookClassWithoutClosID: linux.intelRdt without a closID puts the container in a class
// named by its id (runtime-spec: "If closID is not set, runtimes MUST use the container ID";
// runc's getIntelRdtPath and NewManager, crun's libcrun_get_intelrdt_name), so its pod's
// group is <id>/mon_groups/<uid>, with every task of the container in it. The cases are the
// settings a spec can carry without a closID: only enableMonitoring and only schemata under
// the rules of runc 1.1–1.3 (which do not know enableMonitoring), enableMonitoring under
// runc ≥ 1.4's (the runtime makes its own group <id>/mon_groups/<id>, which is not ours and
// stays), and closID "/" with enableMonitoring under runc ≥ 1.4's: the root class (which
// the real runc 1.1 refuses by itself).
func TestHookClassWithoutClosID(t *testing.T) {
	for _, rt := range []string{"runc", "crun"} {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			testClassWithoutClosID(t, rt)
		})
	}
}

func testClassWithoutClosID(t *testing.T, rt string) {
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\nfailurePolicy: closed\n")
	r := e2e.PreparedRuntime(t, rt)
	for i, c := range []struct {
		name       string
		rdt        specs.LinuxIntelRdt
		monitoring bool // the stand-in follows runc ≥ 1.4 (runtime-spec 1.3)
		root       bool // the class is the root, not the container's id
	}{
		{name: "monitoring", rdt: specs.LinuxIntelRdt{EnableMonitoring: true}},
		{name: "schemata", rdt: specs.LinuxIntelRdt{Schemata: []string{"L3:0=ff"}}},
		{name: "monitoring-own-group", rdt: specs.LinuxIntelRdt{EnableMonitoring: true}, monitoring: true},
		{name: "root-by-name", rdt: specs.LinuxIntelRdt{ClosID: "/", EnableMonitoring: true}, monitoring: true, root: true},
	} {
		id := rt + "-noclos-" + c.name
		uid := fmt.Sprintf("6a1f3c2e-0000-4000-8000-1000000000%02d", i)
		stand := []string{"classhook", e.Sim.Dir}
		if c.monitoring {
			stand = []string{"classhook", "-monitoring", e.Sim.Dir}
		}
		hooks := e.Hooks()
		hooks.CreateRuntime = append([]specs.Hook{{Path: e2e.Binaries.ClassHook, Args: stand, Timeout: e2e.IntPtr(10)}}, hooks.CreateRuntime...)
		rdt := c.rdt
		b := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"forker"}, IntelRdt: &rdt,
			Annotations: e2e.CRIOPod(uid, e2e.SandboxOf(byte('a'+i)), "app"), Hooks: hooks})
		class, group := id+"/", id+"/mon_groups/"+uid
		if c.root {
			class, group = "", "mon_groups/"+uid
		}
		err := r.Run(id, b)
		if c.root && rt == "runc" {
			// runc before 1.4 refuses the name "/" itself (validate's intelrdtCheck), RDT
			// hardware or not: the container never runs.
			if err == nil || !strings.Contains(err.Error(), `invalid intelRdt.ClosID \"/\"`) {
				t.Errorf("%s: runc 1.1 ran closID \"/\": %v", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v\n%s", c.name, err, e.Log())
			continue
		}
		e2e.WaitReady(t, b)
		if missing, total := e.Outside(r, id, group); missing != 0 || total < 12 {
			t.Errorf("%s: %d of %d tasks outside %s\n%s", c.name, missing, total, group, e.Log())
		}
		if n := e.LogLines("container="+id, "group="+group, "outcome=created"); n != 1 {
			t.Errorf("%s: no log line of the placement in %s:\n%s", c.name, group, e.Log())
		}
		// runc's own group, emptied by the move, is removed by the hook (its RMID freed: one
		// container, one RMID); crun's stays, as its exec writes into it.
		own := class + "mon_groups/" + id
		if c.monitoring && rt == "runc" && e.Exists(own) {
			t.Errorf("%s: runc's own group %s is still there after the hook, holding a second RMID\n%s", c.name, own, e.Log())
		}
		if c.monitoring && rt == "runc" && e.LogLines("container="+id, "the runtime's group "+own+" removed") != 1 {
			t.Errorf("%s: the log does not say the runtime's group was removed:\n%s", c.name, e.Log())
		}
		if c.monitoring && rt == "crun" && !e.Exists(own) {
			t.Errorf("%s: crun's own group %s is gone (crun's exec writes into it)", c.name, own)
		}
		if err := r.Delete(id, true); err != nil {
			t.Fatal(err)
		}
		if e.Exists(group) {
			t.Errorf("%s: the group outlived the pod (retention 0)\n%s", c.name, e.Log())
		}
		if c.monitoring && rt == "crun" && !e.Exists(own) {
			t.Errorf("%s: crun's own group %s, not ours, was removed", c.name, own)
		}
	}
	if recs := e.Records(); len(recs) != 0 {
		t.Errorf("registry entries left: %+v", recs)
	}
}

// TestHookJoinRemovesRuncsGroup: the second container of a pod joins its live group in the
// hook's own process (a join, its resctrl calls in vfork children), and runc's own group of
// it (enableMonitoring, the runc ≥ 1.4 stand-in) is removed there too, by an rmdir aside, as
// the first container's is by the worker: each container holds no RMID but its pod's.
func TestHookJoinRemovesRuncsGroup(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\nfailurePolicy: closed\n")
	if err := os.Mkdir(filepath.Join(e.Sim.Dir, "gold"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := e2e.PreparedRuntime(t, "runc")
	hooks := e.Hooks()
	hooks.CreateRuntime = append([]specs.Hook{{Path: e2e.Binaries.ClassHook, Args: []string{"classhook", "-monitoring", e.Sim.Dir}, Timeout: e2e.IntPtr(10)}},
		hooks.CreateRuntime...)
	group := "gold/mon_groups/" + e2e.PodUIDA
	for i, id := range []string{"runc-join-first", "runc-join-second"} {
		rdt := specs.LinuxIntelRdt{ClosID: "gold", EnableMonitoring: true}
		b := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"forker"}, IntelRdt: &rdt,
			Annotations: e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), fmt.Sprintf("app%d", i)), Hooks: hooks})
		if err := r.Run(id, b); err != nil {
			t.Fatalf("%s: %v\n%s", id, err, e.Log())
		}
		e2e.WaitReady(t, b)
		if missing, total := e.Outside(r, id, group); missing != 0 || total < 12 {
			t.Errorf("%s: %d of %d tasks outside %s\n%s", id, missing, total, group, e.Log())
		}
		own := "gold/mon_groups/" + id
		if e.Exists(own) {
			t.Errorf("%s: runc's own group %s is still there after the hook\n%s", id, own, e.Log())
		}
		outcome := []string{"outcome=created", "outcome=joined"}[i]
		if n := e.LogLines("container="+id, outcome, "the runtime's group "+own+" removed"); n != 1 {
			t.Errorf("%s: no log line of the placement (%s) saying runc's group was removed:\n%s", id, outcome, e.Log())
		}
	}
	for _, id := range []string{"runc-join-second", "runc-join-first"} {
		if err := r.Delete(id, true); err != nil {
			t.Fatal(err)
		}
	}
	if es, err := os.ReadDir(filepath.Join(e.Sim.Dir, "gold", "mon_groups")); err != nil || len(es) != 0 {
		t.Errorf("gold/mon_groups holds %v (%v), want nothing", es, err)
	}
}
