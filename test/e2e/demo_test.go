package e2e_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
)

// TestDemo runs `make demo`, the README's main job, as a newcomer would: it must place every
// task of the demo pod in its group (it exits non-zero otherwise) and end with the pod's
// snapshots.
func TestDemo(t *testing.T) {
	e2e.RequireRoot(t) // the demo mounts the simulator and runs runc
	// Not parallel: make writes bin/, which the other make-driven test runs.
	out, err := exec.Command("make", "-C", "../..", "demo").CombinedOutput()
	if err != nil {
		t.Fatalf("make demo: %v\n%s", err, out)
	}
	for _, want := range []string{"tasks of the pod outside its group: 0", "outcome=created", "outcome=joined", ".end"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make demo did not say %q:\n%s", want, out)
		}
	}
}
