package runtimes_test

import (
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
)

// TestPodmanHooks runs podman containers, detached and attached, with a hooks.d entry for
// createRuntime and poststop, and checks what the hook saw.
func TestPodmanHooks(t *testing.T) {
	for _, rt := range runtimes {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			if rt.name == "crun" {
				e2e.PrepareCrun(t)
			}
			pm := e2e.Podman(t)
			rootfs := e2e.Rootfs(t, nil)
			rec := e2e.NewHookRecorder(t)
			// One entry for both stages, as a hooks.d file for resctrl-mon would have: no
			// stage argument, so records tell the stages apart by status.
			hooksDir := e2e.WriteHooksDir(t, specs.Hook{Path: rec.Script}, "createRuntime", "poststop")
			ann := testAnnotations(t)
			opts := e2e.PodmanRunOptions{
				Runtime:     rt.name,
				HooksDir:    hooksDir,
				Rootfs:      rootfs,
				Annotations: ann,
			}

			detached := opts
			detached.Name, detached.Args, detached.Detach = "e2e-sleeps", twoSleeps, true
			id, err := pm.Run(detached)
			if err != nil {
				t.Fatal(err)
			}
			pid, err := pm.PID(id)
			if err != nil {
				t.Fatal(err)
			}
			recs := waitRecords(t, rec, 1)
			t.Logf("podman/%s createRuntime stdin: %s", rt.name, recs[0].Raw)
			cr := recs[0].State
			if cr.Status != rt.createRuntime || cr.ID != id || cr.Pid != pid {
				t.Errorf("createRuntime state: %s, want status %s, id %s, pid %d", recs[0].Raw, rt.createRuntime, id, pid)
			}
			checkAnnotations(t, "createRuntime state", cr.Annotations, ann)
			tids := waitForTwoSleeps(t, pid)
			t.Logf("podman/%s cgroup tasks of init %d: %v", rt.name, pid, tids)
			if err := pm.Remove(id); err != nil {
				t.Fatal(err)
			}
			recs = waitRecords(t, rec, 2)
			t.Logf("podman/%s poststop stdin: %s", rt.name, recs[1].Raw)
			checkStopped(t, recs[1], id, ann)

			attached := opts
			attached.Args, attached.Flags = []string{"sh", "-c", "echo hello from $(hostname)"}, []string{"--rm", "--hostname", "e2e-podman"}
			out, err := pm.Run(attached)
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(out) != "hello from e2e-podman" {
				t.Errorf("attached run printed %q", out)
			}
			recs = waitRecords(t, rec, 4)
			if recs[2].State.Status != rt.createRuntime || recs[3].State.Status != specs.StateStopped {
				t.Errorf("attached run's hook states: %s then %s", recs[2].Raw, recs[3].Raw)
			}
			checkAnnotations(t, "attached createRuntime state", recs[2].State.Annotations, ann)
		})
	}
}
