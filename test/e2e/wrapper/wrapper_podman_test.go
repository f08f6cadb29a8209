package wrapper_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/wrapper"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestWrapperPodman: podman --runtime pointing at the wrapper (through a script named runc
// that records each command line conmon and podman give it: podman passes the runtime only
// the environment its containers.conf lists, and treats a runtime by its file name). With an
// empty hooks directory the wrapper is what places the container; a `podman exec` of a
// forking process is placed too, every task of the container's cgroup in the pod's group.
// The recorded command lines are what ParseArgs must read: each create, run and exec is
// checked, and the test prints them (lib/wrapper's testdata/podman-argv.txt holds a run's).
func TestWrapperPodman(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "")
	runc := e2e.PreparedRuntime(t, "runc")
	e.Config(fmt.Sprintf("runtime: %s\nruntimeHook: %s\n", runc.Bin, e2e.Binaries.Hook))
	script, argvLog := argvScript(t, config.ConfigEnv+"="+shellQuote(e.CfgPath))
	p := e2e.Podman(t)
	group := "mon_groups/" + e2e.PodUIDA
	// podman's --annotation takes no JSON value (it parses the flag as CSV): CRI-O's labels
	// record is left out.
	ann := e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app")
	delete(ann, "io.kubernetes.cri-o.Labels")
	id, err := p.Run(e2e.PodmanRunOptions{Runtime: script, Rootfs: e.Rootfs, Args: []string{"forker"}, Detach: true,
		Name: "e2e-wrapped", Annotations: ann})
	if err != nil {
		t.Fatalf("%v\n%s", err, e.Log())
	}
	e2e.WaitPodmanReady(t, p, id)
	if _, err := p.Command("exec", "--detach", id, "forker"); err != nil {
		t.Fatal(err)
	}
	pid, err := p.PID(id)
	if err != nil {
		t.Fatal(err)
	}
	var placed, total int
	err = poll.Until(20*time.Second, func() error {
		tids, err := e2e.CgroupTasks(pid)
		if err != nil {
			return err
		}
		placed, total = e.PlacedOf(group, tids), len(tids)
		if total < 24 { // the container's forker and the exec'd one, 12 tasks or more each
			return fmt.Errorf("%d tasks in the container's cgroup, want the two forkers' 24 or more", total)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("podman run and exec through the wrapper: placed %d of %d tasks", placed, total)
	if placed != total {
		t.Errorf("placed %d of %d tasks\n%s", placed, total, e.Log())
	}
	b, err := os.ReadFile(argvLog)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		args := strings.Split(strings.TrimSuffix(line, "\t"), "\t")
		c := wrapper.ParseArgs(args)
		t.Logf("podman gave the runtime: %q → %s %s", args, c.Name, c.ContainerID)
		if c.Name == "create" || c.Name == "run" || c.Name == "exec" {
			seen[c.Name] = true
			if c.Err != nil || c.ContainerID != id {
				t.Errorf("%q: read as %+v, want container %s", args, c, id)
			}
		}
	}
	if !seen["create"] || !seen["exec"] {
		t.Errorf("podman's runtime calls had no create or no exec: %s", b)
	}
	if err := p.Remove(id); err != nil {
		t.Fatal(err)
	}
}

// argvScript writes a script named runc that records each command line it is given (one
// call a line, arguments separated by tabs) in log, and execs the wrapper with env (shell
// assignments, such as RESCTRL_MON_CONFIG=...) set.
func argvScript(t *testing.T, env string) (script, log string) {
	t.Helper()
	dir := t.TempDir()
	script, log = filepath.Join(dir, "runc"), filepath.Join(dir, "argv.log")
	body := fmt.Sprintf("#!/bin/sh\nfor a in \"$@\"; do printf '%%s\\t' \"$a\"; done >>%s\necho >>%s\n%s exec %s \"$@\"\n",
		shellQuote(log), shellQuote(log), env, shellQuote(e2e.Binaries.Wrapper))
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, log
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
