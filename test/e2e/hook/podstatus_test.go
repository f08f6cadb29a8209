package hook_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// `resctrl-mon status --pod` (what `kubectl resctrl-mon pod` runs on the pod's node) shows one
// pod's group whole, for a pod a real runc started through the hook: its containers, tasks and
// counters, the life its snapshots keep; a pod the node has no group of is an error naming it.
func TestStatusOfOnePod(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "")
	r := e2e.PreparedRuntime(t, "runc")
	b := e.Bundle(e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app"))
	if err := r.Run("one", b); err != nil {
		t.Fatal(err)
	}
	e2e.WaitReady(t, b)
	status := func(args ...string) (string, error) {
		out, err := exec.Command(e2e.Binaries.CLI, append([]string{"--config", e.CfgPath, "status"}, args...)...).CombinedOutput()
		return string(out), err
	}
	out, err := status("--pod", e2e.PodUIDA, "--json")
	if err != nil {
		t.Fatalf("status --pod --json: %v\n%s", err, out)
	}
	var st inventory.PodStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --pod --json: %v\n%s", err, out)
	}
	if st.Pod.Path != "mon_groups/"+e2e.PodUIDA || st.Pod.Tasks < 1 || len(st.Pod.Containers) != 1 || st.Pod.Containers[0].ID != "one" ||
		len(st.Pod.Readings) == 0 || len(st.Lives) != 1 || st.Lives[0].Ended {
		t.Errorf("status --pod --json: %+v", st)
	}
	out, err = status("--pod", e2e.PodUIDA)
	if err != nil {
		t.Fatalf("status --pod: %v\n%s", err, out)
	}
	for _, want := range []string{"group mon_groups/" + e2e.PodUIDA, "one", "llc_occupancy", "began", "going on", "failures: none recorded"} {
		if !strings.Contains(out, want) {
			t.Errorf("status --pod does not say %q:\n%s", want, out)
		}
	}
	if out, err := status("--pod", "default/nobody"); err == nil || !strings.Contains(out, `"default/nobody"`) {
		t.Errorf("status --pod of a pod without a group: %v\n%s", err, out)
	}
}
