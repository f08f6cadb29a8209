package install_test

import (
	"os/exec"
	"strconv"
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
	out, err := exec.Command("make", "-C", "../../..", "demo").CombinedOutput()
	if err != nil {
		t.Fatalf("make demo: %v\n%s", err, out)
	}
	for _, want := range []string{"tasks of the pod outside its group: 0", "outcome=created", "outcome=joined", ".end"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make demo did not say %q:\n%s", want, out)
		}
	}
}

// TestDemoPrometheus is docs/operations/prometheus.md's path from the demo to Prometheus: `make demo-prometheus`
// keeps the demo's pod running while serve exports it and a real Prometheus scrapes serve,
// and each of its queries must answer for the pod with a positive value.
func TestDemoPrometheus(t *testing.T) {
	e2e.RequireRoot(t)
	// Not parallel: make writes bin/, which the other make-driven tests run.
	out, err := exec.Command("make", "-C", "../../..", "demo-prometheus").CombinedOutput()
	if err != nil {
		t.Fatalf("make demo-prometheus: %v\n%s", err, out)
	}
	for _, what := range []string{"memory bandwidth, bytes/s", "LLC occupancy, bytes", "power (AET energy), watts", "share of time waiting for CPU (PSI some)"} {
		if v, ok := demoAnswer(string(out), what); !ok || v <= 0 {
			t.Errorf("Prometheus' answer for %s: %v (found %v), want a positive value for the pod:\n%s", what, v, ok, out)
		}
	}
	if !strings.Contains(string(out), "tasks of the pod outside its group: 0") {
		t.Errorf("the demo's pod was not placed whole:\n%s", out)
	}
}

// demoAnswer is the largest value promtool printed under the demo's query line for what.
func demoAnswer(out, what string) (float64, bool) {
	_, rest, ok := strings.Cut(out, "   "+what+": ")
	if !ok {
		return 0, false
	}
	lines := strings.Split(rest, "\n")[1:]
	best, found := 0.0, false
	for _, l := range lines {
		if !strings.HasPrefix(l, "      ") {
			break
		}
		_, v, ok := strings.Cut(l, "=> ")
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(v, " ")
		if f, err := strconv.ParseFloat(num, 64); err == nil && (!found || f > best) {
			best, found = f, true
		}
	}
	return best, found
}
