package k8s

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
)

// plugin runs install/kubectl/kubectl-resctrl_mon as kubectl runs a plugin: kubectl on PATH,
// the cluster's kubeconfig.
func (s *scenario) plugin(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(repoRoot(s.t), "install", "kubectl", "kubectl-resctrl_mon"), args...)
	cmd.Env = append(s.env(), "PATH="+filepath.Dir(s.kubectl)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String() + errb.String(), err
}

// kubectlPlugin: `kubectl resctrl-mon` from outside the node, as an operator runs it. A pod's
// group (found through the pod's node and UID), its containers and counters, in text and JSON;
// the node's status; a pod that has no group is an error naming it.
func (s *scenario) kubectlPlugin(wl *workloads) {
	t := s.t
	out, err := s.plugin("pod", "-n", "default", wl.web.Name)
	if err != nil {
		t.Fatalf("kubectl resctrl-mon pod: %v\n%s", err, out)
	}
	for _, want := range []string{"group " + groupOf(wl.web.UID), "uid " + wl.web.UID, "llc_occupancy", "lives"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl resctrl-mon pod default/%s does not say %q:\n%s", wl.web.Name, want, out)
		}
	}
	out, err = s.plugin("pod", "--namespace=default", wl.web.Name, "--json")
	var st inventory.PodStatus
	if err != nil || json.Unmarshal([]byte(out), &st) != nil || st.Pod.PodUID != wl.web.UID || len(st.Pod.Containers) != 2 || st.Pod.Tasks < 1 {
		t.Errorf("kubectl resctrl-mon pod --json: %+v, %v\n%s", st, err, out)
	}
	out, err = s.plugin("node", s.Node())
	if err != nil || !strings.Contains(out, groupOf(wl.web.UID)) || !strings.Contains(out, "RMIDs:") {
		t.Errorf("kubectl resctrl-mon node %s: %v\n%s", s.Node(), err, out)
	}
	// A pod that does not exist is refused, naming it.
	if out, err := s.plugin("pod", "-n", "default", "no-such-pod"); err == nil || !strings.Contains(out, "no-such-pod") {
		t.Errorf("kubectl resctrl-mon pod of no pod: %v\n%s", err, out)
	}
}
