package e2e_test

import (
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
// runc 1.1 and crun 1.8 apply linux.intelRdt only on a host with RDT hardware (and otherwise
// ignore it), so the test's classhook, run as the first createRuntime hook, does their part:
// the init's leader into gold/tasks.
func TestHookAllocationClass(t *testing.T) {
	for _, rt := range []string{"runc", "crun"} {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			testAllocationClass(t, rt)
		})
	}
}

func testAllocationClass(t *testing.T, rt string) {
	e := newHookEnv(t, resctrlsim.Options{}, "retention: 0s\nfailurePolicy: closed\n")
	// The class exists before any container: made by an allocation plugin or the admin.
	if err := os.Mkdir(filepath.Join(e.sim.Dir, "gold"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newRuntime(t, rt)
	hooks := e.hooks()
	classed := &specs.Hooks{
		CreateRuntime: append([]specs.Hook{{Path: binaries.classhook, Args: []string{"classhook", e.sim.Dir}, Timeout: intp(10)}}, hooks.CreateRuntime...),
		Poststop:      hooks.Poststop,
	}
	app := e2e.NewBundle(t, e.rootfs, e2e.BundleOptions{Args: []string{"forker"}, ClosID: "gold",
		Annotations: crioPod(uidA, sandboxOf('a'), "app"), Hooks: classed})
	if err := r.Run(rt+"-class-app", app); err != nil {
		t.Fatalf("%v\n%s", err, e.log())
	}
	waitReady(t, app)
	group := "gold/mon_groups/" + uidA
	if missing, total := e.outside(r, rt+"-class-app", group); missing != 0 || total < 12 {
		t.Errorf("%d of %d tasks outside %s\n%s", missing, total, group, e.log())
	}
	if e.exists("mon_groups/" + uidA) {
		t.Errorf("a group of the pod under the root class too")
	}
	if n := e.logLines("container="+rt+"-class-app", "group="+group, "outcome=created"); n != 1 {
		t.Errorf("no log line of the classed container's placement:\n%s", e.log())
	}
	// runc's init is a Go program with several threads, of which runc moved only the leader
	// into the class; the others, which end at execve, are refused for the class's group by
	// the kernel and left, and the log says so. crun's init is one thread.
	if n := e.logLines("container="+rt+"-class-app", "threads outside class gold left"); rt == "runc" && n != 1 {
		t.Errorf("the init's other threads are not reported as left:\n%s", e.log())
	}

	// The same pod, outside the class: one group cannot span classes.
	plain := e.bundle(crioPod(uidA, sandboxOf('a'), "sidecar"))
	err := r.Run(rt+"-class-sidecar", plain)
	if err == nil || !strings.Contains(err.Error(), "a group cannot span classes") {
		t.Errorf("a container of the pod outside its class: %v, want refused (fail-closed) for the class", err)
	}
	if n := e.logLines("container="+rt+"-class-sidecar", "outcome=refused", "allocation class mismatch"); n != 1 {
		t.Errorf("the refusal is not logged:\n%s", e.log())
	}

	// A runtime that did not apply the class (no classhook here): the init is not where its
	// spec says, the hook says so, and the group it made for it does not stay behind.
	unapplied := e2e.NewBundle(t, e.rootfs, e2e.BundleOptions{Args: []string{"forker"}, ClosID: "gold",
		Annotations: crioPod(uidB, sandboxOf('b'), "app"), Hooks: hooks})
	err = r.Run(rt+"-class-unapplied", unapplied)
	if err == nil || !strings.Contains(err.Error(), "did the runtime apply linux.intelRdt?") {
		t.Errorf("a container the runtime did not put in its class: %v, want refused (fail-closed) saying why", err)
	}
	if e.exists("gold/mon_groups/" + uidB) {
		t.Errorf("the group made for the unplaced container was left behind")
	}

	if err := r.Delete(rt+"-class-app", true); err != nil {
		t.Fatal(err)
	}
	if e.exists(group) {
		t.Errorf("the group outlived the pod (retention 0)\n%s", e.log())
	}
	if !e.exists("gold") {
		t.Errorf("the class gold, not ours, is gone")
	}
	if recs := e.records(); len(recs) != 0 {
		t.Errorf("registry entries left: %+v", recs)
	}
}
