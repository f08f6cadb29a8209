package hook_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/hooks/hook"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// createRuntime must not do housekeeping (sweeps) on the container's critical path: an
// expired group that a poststop does sweep is still there after another pod's createRuntime.
func TestNoHousekeepingAtCreateRuntime(t *testing.T) {
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	dir := t.TempDir()
	cfg := config.Default()
	cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir = sim.Dir, filepath.Join(dir, "state"), ""
	cfg.ResctrlSimulator = true
	cfg.Log, cfg.Retention = "file:"+filepath.Join(dir, "hook.log"), config.Duration(300*time.Millisecond)
	state := func(id string, pid int, uid string) string {
		return fmt.Sprintf(`{"id":%q,"pid":%d,"annotations":{"io.kubernetes.pod.uid":%q,"io.kubernetes.cri-o.SandboxID":%q,"io.kubernetes.cri-o.ContainerType":"container"}}`,
			id, pid, uid, strings.Repeat("a", 64))
	}
	first := filepath.Join(sim.Dir, "mon_groups/11111111-2222-3333-4444-555555555555")
	run := func(stage, in string) {
		t.Helper()
		var stderr bytes.Buffer
		if code := hook.Run(time.Now(), nil, stage, strings.NewReader(in), &stderr, cfg, nil, kernel.Open); code != 0 {
			t.Fatalf("%s: exit %d: %s", stage, code, stderr.String())
		}
	}
	p := exec.Command("sleep", "60")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Process.Kill() }()
	run(hook.CreateRuntime, state("c1", p.Process.Pid, "11111111-2222-3333-4444-555555555555"))
	if _, err := os.Stat(first); err != nil {
		t.Fatalf("createRuntime made no group: %v", err)
	}
	_ = p.Process.Kill()
	_, _ = p.Process.Wait()
	run(hook.Poststop, `{"id":"c1"}`)
	// Retention (300 ms) has not passed: the idle group stays.
	if _, err := os.Stat(first); err != nil {
		t.Fatalf("poststop removed the group inside its window: %v", err)
	}
	time.Sleep(350 * time.Millisecond) // now it has: the group is expired
	_ = os.Remove(filepath.Join(cfg.StateDir, "last-sweep"))
	q := exec.Command("sleep", "60")
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = q.Process.Kill() }()
	run(hook.CreateRuntime, state("c2", q.Process.Pid, "22222222-2222-3333-4444-555555555555"))
	if _, err := os.Stat(first); err != nil {
		t.Errorf("createRuntime of another pod swept an expired group: %v", err)
	}
	// A poststop does sweep it: what createRuntime left was there to sweep.
	_ = os.Remove(filepath.Join(cfg.StateDir, "last-sweep"))
	run(hook.Poststop, `{"id":"c-other"}`)
	if _, err := os.Stat(first); err == nil {
		t.Errorf("a poststop did not sweep the expired group either: the check above proves nothing")
	}
}

// The hook ends inside its budget whatever resctrl does: with every tasks write taking
// longer than the budget, createRuntime returns by the policy and logs why.
func TestBudget(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	sim.SetLatency(resctrlsim.OpTasksWrite, 3*time.Second)
	for _, policy := range []config.FailurePolicy{config.FailOpen, config.FailClosed} {
		dir := t.TempDir()
		cfg := config.Default()
		cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir = sim.Dir, filepath.Join(dir, "state"), ""
		cfg.ResctrlSimulator = true
		cfg.Log, cfg.FailurePolicy, cfg.HookBudget = "file:"+filepath.Join(dir, "hook.log"), policy, config.Duration(500*time.Millisecond)
		p := exec.Command("sleep", "60")
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Process.Kill(); _ = p.Wait() })
		in := fmt.Sprintf(`{"id":"c-%s","pid":%d}`, policy, p.Process.Pid)
		start := time.Now()
		var stderr bytes.Buffer
		code := hook.Run(time.Now(), nil, hook.CreateRuntime, strings.NewReader(in), &stderr, cfg, nil, kernel.Open)
		took := time.Since(start)
		if want := map[config.FailurePolicy]int{config.FailOpen: 0, config.FailClosed: 1}[policy]; code != want {
			t.Errorf("%s: exit %d, want %d", policy, code, want)
		}
		if took > 2*time.Second {
			t.Errorf("%s: the hook took %s with a 500ms budget", policy, took)
		}
		log, _ := os.ReadFile(filepath.Join(dir, "hook.log"))
		if !strings.Contains(string(log), "time budget exhausted") || !strings.Contains(string(log), "container=c-"+string(policy)) {
			t.Errorf("%s: the log does not say the budget ran out: %s", policy, log)
		}
		// The worker the hook left writes the state dir until its slow write is done: the
		// test's directory is removed after it is, not while (a loaded machine lost that race).
		waitLogged(t, filepath.Join(dir, "hook.log"), "hook finished after its budget")
	}
}

// waitLogged waits, a minute at most, for a line holding text in the log at path.
func waitLogged(t *testing.T, path, text string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never logged %q", path, text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A runtime whose stdin never closes cannot hold the hook past its budget.
func TestBudgetStdinNeverCloses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.StateDir, cfg.Log, cfg.HookBudget = filepath.Join(dir, "state"), "file:"+filepath.Join(dir, "hook.log"), config.Duration(300*time.Millisecond)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close(); _ = r.Close() })
	var stderr bytes.Buffer
	if code := hook.Run(time.Now(), nil, hook.CreateRuntime, r, &stderr, cfg, nil, kernel.Open); code != 0 {
		t.Errorf("exit %d under the open policy", code)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "hook.log")); !strings.Contains(string(log), "time budget exhausted") {
		t.Errorf("log: %s", log)
	}
}
