package hook_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/hooks/hook"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// runHookArg makes the test binary a hook process (TestMain): its stage, the configuration
// as JSON in joinTestConfig, the state on stdin.
const (
	runHookArg     = "hook-test-run-createRuntime"
	joinTestConfig = "HOOK_TEST_CONFIG"
)

// runHook is the hook's main, for a process of its own.
func runHook() int {
	var cfg config.Config
	if err := json.Unmarshal([]byte(os.Getenv(joinTestConfig)), &cfg); err != nil {
		return 3
	}
	return hook.Run(time.Now(), nil, hook.CreateRuntime, os.Stdin, os.Stderr, cfg, nil, kernel.Open)
}

// joinEnv is a pod whose group its first container made, and a second container to join it.
type joinEnv struct {
	sim   *resctrlsim.Sim
	cfg   config.Config
	group string
}

const joinUID = "0a1b2c3d-0000-4000-8000-00000000000a"

func newJoinEnv(t *testing.T, policy config.FailurePolicy) *joinEnv {
	t.Helper()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	dir := t.TempDir()
	cfg := config.Default()
	cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir = sim.Dir, filepath.Join(dir, "state"), ""
	cfg.ResctrlSimulator = true
	// A budget no loaded machine runs out of: the budget is TestJoinBudget's subject alone.
	cfg.Log, cfg.FailurePolicy, cfg.HookBudget = "file:"+filepath.Join(dir, "hook.log"), policy, config.Duration(30*time.Second)
	e := &joinEnv{sim: sim, cfg: cfg, group: "mon_groups/" + joinUID}
	if code, stderr := e.run(t, "first", sleeper(t)); code != 0 {
		t.Fatalf("the pod's first container: exit %d: %s", code, stderr)
	}
	return e
}

func sleeper(t *testing.T) int {
	t.Helper()
	p := exec.Command("sleep", "60")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Process.Kill(); _ = p.Wait() })
	return p.Process.Pid
}

func joinState(id string, pid int) string {
	return fmt.Sprintf(`{"id":%q,"pid":%d,"annotations":{"io.kubernetes.pod.uid":%q,"io.kubernetes.cri-o.SandboxID":%q,"io.kubernetes.cri-o.ContainerType":"container"}}`,
		id, pid, joinUID, strings.Repeat("b", 64))
}

// run is a createRuntime hook call in this process.
func (e *joinEnv) run(t *testing.T, id string, pid int) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	code := hook.Run(time.Now(), nil, hook.CreateRuntime, strings.NewReader(joinState(id, pid)), &stderr, e.cfg, nil, kernel.Open)
	return code, stderr.String()
}

func (e *joinEnv) tasks(t *testing.T) []int {
	t.Helper()
	tids, err := e.sim.Tasks(e.group)
	if err != nil {
		t.Fatal(err)
	}
	return tids
}

func (e *joinEnv) log(t *testing.T) string {
	t.Helper()
	b, _ := os.ReadFile(strings.TrimPrefix(e.cfg.Log, "file:"))
	return string(b)
}

// runProcess is a createRuntime hook call in a process of its own, as a runtime makes it:
// its exit code, once it has ended and closed its stdout and stderr. Not in this process:
// a join's vfork child waits on the simulator this process serves (see aside.Calls).
func (e *joinEnv) runProcess(t *testing.T, id string, pid int) int {
	t.Helper()
	cfg, err := json.Marshal(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], runHookArg)
	cmd.Env = append(os.Environ(), joinTestConfig+"="+string(cfg))
	cmd.Stdin = strings.NewReader(joinState(id, pid))
	if _, err := cmd.Output(); err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode()
}

// A container joining its pod's live group is placed (by the hook's own process, with
// resctrl's calls in a vfork child), as by the worker: joined, its init in the group.
func TestJoinPlaces(t *testing.T) {
	t.Parallel()
	e := newJoinEnv(t, config.FailClosed)
	pid := sleeper(t)
	if code := e.runProcess(t, "second", pid); code != 0 {
		t.Fatalf("exit %d:\n%s", code, e.log(t))
	}
	if !slices.Contains(e.tasks(t), pid) {
		t.Errorf("the joining container's init %d is not in %s: %v", pid, e.group, e.tasks(t))
	}
	if log := e.log(t); !strings.Contains(log, "container=second") || !strings.Contains(log, "outcome=joined") {
		t.Errorf("the log does not say the container joined:\n%s", log)
	}
}

// A join ends inside the budget whatever the tasks write does, in a process of its own as
// the hook runs: with every write taking longer than the budget, the hook process exits by
// its policy, saying why, with the container recorded and the pod marked late; the write it
// left completes on its own afterwards.
func TestJoinBudget(t *testing.T) {
	t.Parallel()
	for _, policy := range []config.FailurePolicy{config.FailOpen, config.FailClosed} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			e := newJoinEnv(t, policy)
			// A budget the join's work before its write fits in (it takes milliseconds),
			// and a write that outlasts it by far.
			e.cfg.HookBudget = config.Duration(3 * time.Second)
			e.sim.SetLatency(resctrlsim.OpTasksWrite, 10*time.Second)
			pid := sleeper(t)
			code := e.runProcess(t, "slow", pid)
			if want := map[config.FailurePolicy]int{config.FailOpen: 0, config.FailClosed: 1}[policy]; code != want {
				t.Errorf("exit %d, want %d", code, want)
			}
			if slices.Contains(e.tasks(t), pid) {
				t.Fatalf("the write was done before the hook ended: the test proves nothing")
			}
			if log := e.log(t); !strings.Contains(log, "time budget exhausted") || !strings.Contains(log, "container=slow") {
				t.Errorf("the log does not say the budget ran out:\n%s", log)
			}
			store, err := registry.Open(e.cfg.StateDir)
			if err != nil {
				t.Fatal(err)
			}
			rec, ok, err := store.Load(joinUID)
			if _, in := rec.Containers["slow"]; err != nil || !ok || !in || !rec.LateAssigned {
				t.Errorf("the container is not recorded in a late-assigned pod: %+v, %v, %v", rec, ok, err)
			}
			// The child the hook left makes the write when resctrl answers.
			deadline := time.Now().Add(time.Minute)
			for !slices.Contains(e.tasks(t), pid) {
				if time.Now().After(deadline) {
					t.Fatalf("the write the hook left was never made: %v", e.tasks(t))
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// A pod whose group went while its record lives on (resctrl remounted) is not a join: the
// worker makes the group again, and the hook's attempt leaves nothing behind (no failure).
func TestJoinGroupGone(t *testing.T) {
	t.Parallel()
	e := newJoinEnv(t, config.FailClosed)
	if err := os.Remove(filepath.Join(e.sim.Dir, e.group)); err != nil {
		t.Fatal(err)
	}
	pid := sleeper(t)
	if code := e.runProcess(t, "second", pid); code != 0 {
		t.Fatalf("exit %d:\n%s", code, e.log(t))
	}
	if !slices.Contains(e.tasks(t), pid) {
		t.Errorf("the container's init %d is not in the group made again: %v", pid, e.tasks(t))
	}
	if log := e.log(t); !strings.Contains(log, "container=second") || !strings.Contains(log, "outcome=created") {
		t.Errorf("the log does not say the group was made again:\n%s", log)
	}
	store, err := registry.Open(e.cfg.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	if fs, err := store.Failures(time.Time{}); err != nil || len(fs) != 0 {
		t.Errorf("failures recorded: %+v, %v", fs, err)
	}
}

// A join whose first resctrl call, the group's stat, hangs past the budget ends inside it
// like every other path: the hook exits by its policy, saying why, with the container
// recorded in its pod and the pod marked late-assigned, and the hook's own mark finds the
// pod's lock free (no goroutine of the hook waits inside it).
func TestJoinStatHangs(t *testing.T) {
	t.Parallel()
	for _, policy := range []config.FailurePolicy{config.FailOpen, config.FailClosed} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			e := newJoinEnv(t, policy)
			e.cfg.HookBudget = config.Duration(3 * time.Second)
			// Every lookup of the group, the kernel's cache of it forgotten, outlasts the
			// budget by far.
			e.sim.SetLatency(resctrlsim.OpLookup, 10*time.Second)
			pid := sleeper(t)
			code := e.runProcess(t, "hung", pid)
			if want := map[config.FailurePolicy]int{config.FailOpen: 0, config.FailClosed: 1}[policy]; code != want {
				t.Errorf("exit %d, want %d", code, want)
			}
			log := e.log(t)
			if !strings.Contains(log, "time budget exhausted") || !strings.Contains(log, "container=hung") {
				t.Errorf("the log does not say the budget ran out:\n%s", log)
			}
			if strings.Contains(log, "could not mark the pod late-assigned") {
				t.Errorf("the hook's mark waited on the pod's lock:\n%s", log)
			}
			store, err := registry.Open(e.cfg.StateDir)
			if err != nil {
				t.Fatal(err)
			}
			rec, ok, err := store.Load(joinUID)
			if _, in := rec.Containers["hung"]; err != nil || !ok || !in || !rec.LateAssigned {
				t.Errorf("the container is not recorded in a late-assigned pod: %+v, %v, %v", rec, ok, err)
			}
			if slices.Contains(e.tasks(t), pid) {
				t.Errorf("the init was moved although the group's stat never answered")
			}
		})
	}
}
