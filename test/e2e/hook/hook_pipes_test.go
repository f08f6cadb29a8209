package hook_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestHookLeavesNoChild: a runtime gives a hook pipes and may wait for them to close, so
// when the hook has exited nothing of it may still hold them. Every stage and outcome
// (created, joined, left, and a failure under each policy) is run with pipes for stdin,
// stdout and stderr, and both output pipes must reach EOF once the hook is gone.
func TestHookLeavesNoChild(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "")
	p := startSleep(t)
	ann := e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app")
	good := e2e.StateJSON(t, specs.State{ID: "c1", Pid: p, Annotations: ann})
	second := e2e.StateJSON(t, specs.State{ID: "c2", Pid: p, Annotations: ann})
	for _, c := range []struct {
		name, stage, policy string
		in                  []byte
	}{
		{"created", "createRuntime", "open", good},
		{"joined", "createRuntime", "open", second},
		{"left", "poststop", "open", second},
		{"failed, open", "createRuntime", "open", []byte("{")},
		{"failed, closed", "createRuntime", "closed", []byte("{")},
	} {
		e.Config("failurePolicy: " + c.policy + "\n")
		stdinR, stdinW := mustPipe(t)
		stdoutR, stdoutW := mustPipe(t)
		stderrR, stderrW := mustPipe(t)
		cmd := exec.Command(e2e.Binaries.Hook, "--config", e.CfgPath, c.stage)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The runtime's ends only: the hook's copies must be the last.
		for _, f := range []*os.File{stdinR, stdoutW, stderrW} {
			_ = f.Close()
		}
		if _, err := stdinW.Write(c.in); err != nil {
			t.Fatalf("%s: write the state: %v", c.name, err)
		}
		_ = stdinW.Close()
		_ = cmd.Wait() // the exit code is other tests' business
		for name, r := range map[string]*os.File{"stdout": stdoutR, "stderr": stderrR} {
			// A generous deadline: EOF comes at once unless something still holds the pipe.
			_ = r.SetReadDeadline(time.Now().Add(10 * time.Second))
			out, err := io.ReadAll(r)
			if err != nil {
				t.Errorf("%s: %s still open after the hook exited: %v", c.name, name, err)
			}
			if name == "stdout" && len(bytes.TrimSpace(out)) > 0 {
				t.Errorf("%s: the hook wrote to stdout: %q", c.name, out)
			}
			_ = r.Close()
		}
	}
	if n := e.LogLines("stage=createRuntime", "container=c2", "outcome=joined"); n != 1 {
		t.Errorf("the joined case did not join:\n%s", e.Log())
	}
}

func mustPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	return r, w
}
