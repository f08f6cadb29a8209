package wrapper_test

import (
	"os"
	"path/filepath"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestWrapperExecClass, under both failure policies: a process exec'd through the wrapper
// into a container that its runtime put in the allocation class gold lands in the pod's
// group gold/mon_groups/<uid>, every task of its tree, and the exec is never refused. The
// wrapper's own thread starts in the root class, and the kernel moves a task into a
// monitoring group only from the group's own class: it joins gold first, as the runtime's
// exec itself does.
//
// The class is applied by the test's classhook (runc 1.1 ignores linux.intelRdt here, see
// TestHookAllocationClass); for the same reason runc's exec does not write the exec'd
// process into gold/tasks afterwards, which on a host with RDT allocation takes it out of
// the pod's group into the class's own (docs/install/wrapper.md).
func TestWrapperExecClass(t *testing.T) {
	for _, policy := range []string{"open", "closed"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			testWrapperExecClass(t, policy)
		})
	}
}

func testWrapperExecClass(t *testing.T, policy string) {
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "")
	w := newWrapped(t, e, "failurePolicy: "+policy+"\n")
	if err := os.Mkdir(filepath.Join(e.Sim.Dir, "gold"), 0o755); err != nil {
		t.Fatal(err)
	}
	hooks := e.Hooks()
	hooks.CreateRuntime = append([]specs.Hook{{Path: e2e.Binaries.ClassHook, Args: []string{"classhook", e.Sim.Dir}, Timeout: e2e.IntPtr(10)}},
		hooks.CreateRuntime...)
	b := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"sleep", "600"}, ClosID: "gold",
		Annotations: e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app"), Hooks: hooks})
	if err := w.plain.Run("c1", b); err != nil {
		t.Fatalf("%v\n%s", err, e.Log())
	}
	group := "gold/mon_groups/" + e2e.PodUIDA
	if !e.Exists(group) {
		t.Fatalf("the container was not placed in %s:\n%s", group, e.Log())
	}

	tree := execForker(t, w.wrapper, "c1")
	if placed := e.PlacedOf(group, tree); placed != len(tree) {
		t.Errorf("failurePolicy %s: exec through the wrapper placed %d of %d tasks in %s\n%s", policy, placed, len(tree), group, e.Log())
	}
	if _, stderr, err := w.wrapper.Command("exec", "c1", "true"); err != nil {
		t.Errorf("failurePolicy %s: an exec into the classed container failed: %v: %s", policy, err, stderr)
	}
	if n := e.LogLines("prog=resctrl-mon-runtime", "command=exec"); n != 0 {
		t.Errorf("failurePolicy %s: the exec was logged (only a failed one is):\n%s", policy, e.Log())
	}
	if err := w.plain.Delete("c1", true); err != nil {
		t.Error(err)
	}
	if !e.Exists("gold") {
		t.Errorf("the class gold, not ours, is gone")
	}
}
