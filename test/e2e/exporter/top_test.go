package exporter_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestTopOnce runs the built `resctrl-mon top --once` against two runc containers the hook
// placed on the simulator with AET: plain text into a pipe, the spinning pod first by
// bandwidth, every column filled, and by name the other way round.
func TestTopOnce(t *testing.T) {
	t.Parallel()
	e := e2e.NewRecEnv(t, resctrlsim.Options{PerfPkgDomains: 1, L3Domains: 2}, "")
	pod := func(uid string, sandbox byte, name string) map[string]string {
		a := e2e.CRIOPod(uid, e2e.SandboxOf(sandbox), name)
		a["io.kubernetes.pod.name"] = name
		return a
	}
	// "a-idle" sorts first by name, last by bandwidth.
	busy := e.Bundle(pod(e2e.PodUIDA, 'a', "z-busy"), "sh", "-c", "while :; do :; done")
	idle := e.Bundle(pod(e2e.PodUIDB, 'b', "a-idle"), "sleep", "100000")
	if err := e.R.Run("top-busy", busy); err != nil {
		t.Fatal(err)
	}
	if err := e.R.Run("top-idle", idle); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sort  string
		first string
	}{{"bw", "e2e/z-busy"}, {"name", "e2e/a-idle"}} {
		out, err := exec.Command(e2e.Binaries.CLI, "--config", e.CfgPath, "top", "--once", "--interval", "1s", "--sort", tc.sort).CombinedOutput()
		if err != nil {
			t.Fatalf("top --once --sort %s: %v\n%s", tc.sort, err, out)
		}
		t.Logf("top --once --sort %s:\n%s", tc.sort, out)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if strings.Contains(string(out), "\x1b") || len(lines) != 4 || !strings.HasPrefix(lines[0], "resctrl-mon top ") ||
			!strings.Contains(lines[0], "sort "+tc.sort) || !strings.HasPrefix(lines[2], tc.first+" ") {
			t.Errorf("--sort %s: want a plain frame of two pods, %s first:\n%s", tc.sort, tc.first, out)
		}
		for _, l := range lines[2:] {
			// name, state, bandwidth, occupancy, watts "W", cpu, memory, io.
			if f := strings.Fields(l); len(f) != 9 || f[1] != "active" || !strings.HasSuffix(f[2], "/s") || f[5] != "W" {
				t.Errorf("row %q: want every column filled", l)
			}
		}
	}
	out, err := exec.Command(e2e.Binaries.CLI, "--config", e.CfgPath, "top", "--sort", "bandwidth").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "want one of bw, llc") {
		t.Errorf("top --sort bandwidth: %v, want a refusal listing the keys:\n%s", err, out)
	}
}
