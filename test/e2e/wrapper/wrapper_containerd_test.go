package wrapper_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestWrapperContainerd: a real containerd 2.x, which has no hooks.d, with a runtime
// handler "wrapped" whose runc BinaryName is the wrapper (through a script that names the
// test's config: the shim hands runc containerd's environment). No NRI plugin is connected,
// so nothing but the wrapper places anything. A pod of one forking container: every task in
// the pod's group (the hooks the wrapper listed), and a forking process started by `crictl
// exec` too.
func TestWrapperContainerd(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "")
	runc := e2e.PreparedRuntime(t, "runc") // only for runc's path
	e.Config(fmt.Sprintf("runtime: %s\nruntimeHook: %s\n", runc.Bin, e2e.Binaries.Hook))
	script, argvLog := argvScript(t, config.ConfigEnv+"="+shellQuote(e.CfgPath))
	root, err := os.MkdirTemp("", "wr-runc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	handler := fmt.Sprintf(`
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.wrapped]
  runtime_type = "io.containerd.runc.v2"

  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.wrapped.options]
    BinaryName = %q
    Root = %q
    SystemdCgroup = false
`, script, root)
	ctrd := e2e.StartContainerd(t, e2e.ContainerdOptions{Rootfs: e.Rootfs, Config: handler})
	group := "mon_groups/" + e2e.PodUIDA
	pod, err := ctrd.RunPod(e2e.PodSpec{Name: "p", Namespace: "e2e", UID: e2e.PodUIDA, Kubelet: true, RuntimeHandler: "wrapped"})
	if err != nil {
		t.Fatalf("%v\n%s", err, e.Log())
	}
	id, err := ctrd.RunContainer(pod, e2e.TestImage, e2e.ContainerSpec{Name: "app", Command: []string{"forker"}})
	if err != nil {
		t.Fatalf("%v\n%s", err, e.Log())
	}
	if err := ctrd.WaitLog(pod, "app", "ready", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	placed, before := e.CRIPlaced(ctrd.CRI, id, group)
	t.Logf("containerd, the wrapper as BinaryName: the container placed %d of %d tasks", placed, len(before))
	if placed != len(before) || len(before) < 12 {
		t.Fatalf("the container: placed %d of %d\n%s", placed, len(before), e.Log())
	}
	e2e.CRIExecForker(t, ctrd.CRI, id)
	placed, after := e.CRIPlaced(ctrd.CRI, id, group)
	t.Logf("crictl exec under containerd through the wrapper: placed %d of %d tasks of the container (%d before the exec)", placed, len(after), len(before))
	if placed != len(after) || len(after) < len(before)+12 {
		t.Errorf("after the exec: placed %d of %d\n%s", placed, len(after), e.Log())
	}
	b, _ := os.ReadFile(argvLog)
	t.Logf("containerd's shim gave the runtime:\n%s", b)
}
