package runtimes_test

import (
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
)

// runtimes are the OCI runtimes under test, with the status each reports to createRuntime
// hooks: runc says "creating", as the spec has it; crun already says "created".
var runtimes = []struct {
	name          string
	createRuntime specs.ContainerState
}{
	{"runc", specs.StateCreating},
	{"crun", specs.StateCreated},
}

// TestRuntimeHooks runs a container whose bundle lists createRuntime and poststop hooks
// through a full life cycle, and checks what the hooks saw and what its cgroup holds.
func TestRuntimeHooks(t *testing.T) {
	for _, rt := range runtimes {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			r := e2e.PreparedRuntime(t, rt.name)
			rec := e2e.NewHookRecorder(t)
			ann := testAnnotations(t)
			b := e2e.NewBundle(t, e2e.Rootfs(t, nil), e2e.BundleOptions{
				Args:        twoSleeps,
				Annotations: ann,
				Hooks:       rec.Hooks("createRuntime", "poststop"),
			})
			id := "e2e-hooks-" + rt.name

			if err := r.Create(id, b); err != nil {
				t.Fatal(err)
			}
			st, err := r.State(id)
			if err != nil {
				t.Fatal(err)
			}
			if st.Status != specs.StateCreated || st.Pid <= 0 {
				t.Fatalf("state after create: %+v, want created with a pid", st)
			}
			recs := waitRecords(t, rec, 1)
			t.Logf("%s createRuntime stdin: %s", rt.name, recs[0].Raw)
			cr := recs[0]
			if cr.Stage != "createRuntime" || cr.State.Status != rt.createRuntime || cr.State.ID != id ||
				cr.State.Pid != st.Pid || cr.State.Bundle != b.Dir {
				t.Errorf("createRuntime state: %s, want status %s, id %s, pid %d, bundle %s",
					cr.Raw, rt.createRuntime, id, st.Pid, b.Dir)
			}
			checkAnnotations(t, "createRuntime state", cr.State.Annotations, ann)

			if err := r.Start(id); err != nil {
				t.Fatal(err)
			}
			tids := waitForTwoSleeps(t, st.Pid)
			t.Logf("%s cgroup tasks of init %d: %v", rt.name, st.Pid, tids)

			if err := r.Kill(id, "KILL"); err != nil {
				t.Fatal(err)
			}
			if err := r.WaitStatus(id, specs.StateStopped, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			if err := r.Delete(id, false); err != nil {
				t.Fatal(err)
			}
			if _, err := r.State(id); err == nil {
				t.Errorf("state of %s after delete: no error", id)
			}
			recs = waitRecords(t, rec, 2)
			t.Logf("%s poststop stdin: %s", rt.name, recs[1].Raw)
			if recs[1].Stage != "poststop" {
				t.Errorf("second hook call is %q, want poststop", recs[1].Stage)
			}
			checkStopped(t, recs[1], id, ann)
		})
	}
}

// TestFailingHook checks that a createRuntime hook that fails makes Create fail, with the
// hook's message in the error.
func TestFailingHook(t *testing.T) {
	const msg = "e2e-hook: refusing this container"
	for _, rt := range runtimes {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			r := e2e.PreparedRuntime(t, rt.name)
			hook := e2e.WriteScript(t, "failing-hook", "echo '"+msg+"' >&2\nexit 1\n")
			b := e2e.NewBundle(t, e2e.Rootfs(t, nil), e2e.BundleOptions{
				Args:  []string{"true"},
				Hooks: &specs.Hooks{CreateRuntime: []specs.Hook{{Path: hook}}},
			})
			id := "e2e-failing-" + rt.name
			err := r.Create(id, b)
			if err == nil {
				t.Fatalf("create with a failing hook: no error")
			}
			t.Logf("%s error: %v", rt.name, err)
			if !strings.Contains(err.Error(), msg) {
				t.Errorf("create error %q does not include the hook's message %q", err, msg)
			}
		})
	}
}
