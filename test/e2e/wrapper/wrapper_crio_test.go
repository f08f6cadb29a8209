package wrapper_test

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestWrapperCRIO: a real CRI-O with the hooks installed in its hooks_dir and a second
// runtime handler, "wrapped", whose runtime_path is the wrapper. Two pods of one forking
// container each, one per handler, both placed by the hook; a forking process started by
// `crictl exec` (ExecSync, what exec probes use) is outside the pod's group under the plain
// handler and, every task of it, inside under the wrapper's.
func TestWrapperCRIO(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "")
	runc := e2e.PreparedRuntime(t, "runc") // only for runc's path
	e.Config(fmt.Sprintf("runtime: %s\nruntimeHook: %s\n", runc.Bin, e2e.Binaries.Hook))
	conmon, err := exec.LookPath("conmon")
	if err != nil {
		t.Skip(err)
	}
	root, err := os.MkdirTemp("", "wr-runc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	// conmon hands the runtime the environment CRI-O gives it (monitor_env): the wrapper's
	// config file comes that way.
	script, argvLog := argvScript(t, "")
	handler := fmt.Sprintf(`
[crio.runtime.runtimes.wrapped]
runtime_path = %q
runtime_type = "oci"
runtime_root = %q
monitor_path = %q
monitor_cgroup = "pod"
monitor_env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "RESCTRL_MON_CONFIG=%s"]
`, script, root, conmon, e.CfgPath)
	crio := e.StartCRIOWithHooks(t, e2e.CRIOOptions{Config: handler})

	for _, tc := range []struct{ handler, uid string }{{"", e2e.PodUIDA}, {"wrapped", e2e.PodUIDB}} {
		name := tc.handler
		if name == "" {
			name = "runc"
		}
		group := "mon_groups/" + tc.uid
		pod, err := crio.RunPod(e2e.PodSpec{Name: "p-" + name, Namespace: "e2e", UID: tc.uid, Kubelet: true, RuntimeHandler: tc.handler})
		if err != nil {
			t.Fatal(err)
		}
		id, err := crio.RunContainer(pod, e2e.TestImage, e2e.ContainerSpec{Name: "app", Command: []string{"forker"}})
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, e.Log())
		}
		if err := crio.WaitLog(pod, "app", "ready", 20*time.Second); err != nil {
			t.Fatal(err)
		}
		placed, before := e.CRIPlaced(crio.CRI, id, group)
		if placed != len(before) {
			t.Fatalf("%s: the container itself: placed %d of %d\n%s", name, placed, len(before), e.Log())
		}
		e2e.CRIExecForker(t, crio.CRI, id)
		placed, after := e.CRIPlaced(crio.CRI, id, group)
		if len(after) < len(before)+12 {
			t.Fatalf("%d tasks in the container's cgroup, want the exec'd forker's 12 more than %d", len(after), len(before))
		}
		t.Logf("crictl exec under the %s handler: placed %d of %d tasks of the container (%d before the exec)", name, placed, len(after), len(before))
		switch {
		case tc.handler == "wrapped" && placed != len(after):
			t.Errorf("under the wrapper: placed %d of %d\n%s", placed, len(after), e.Log())
		case tc.handler == "" && placed == len(after):
			t.Errorf("under plain runc every exec'd task was placed: the gap is not visible")
		}
	}
	b, _ := os.ReadFile(argvLog)
	t.Logf("CRI-O (conmon) gave the runtime:\n%s", b)
	if n := e.LogLines("prog=resctrl-mon-runtime", "command=create", "action=hooks-present"); n != 1 {
		t.Errorf("the wrapper's create under CRI-O, with hooks.d: %d lines saying the hooks were there, want 1\n%s", n, e.Log())
	}
}
