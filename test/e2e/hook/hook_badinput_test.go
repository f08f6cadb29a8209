package hook_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// runHook runs the hook binary as a runtime would, returning its exit code and stderr.
func runHook(t *testing.T, cfgPath, stage string, stdin []byte) (int, string) {
	t.Helper()
	cmd := exec.Command(e2e.Binaries.Hook, "--config", cfgPath, stage)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if stdout.Len() > 0 {
		t.Errorf("the hook wrote to stdout: %q", stdout.String())
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

// TestHookBadInput feeds the real binary every kind of bad input. Each gives a clear logged
// error and the failure policy's exit code (0 open, 1 closed, with the reason on stderr),
// and nothing is written outside the resctrl root and the state dir.
func TestHookBadInput(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "")
	r := e2e.PreparedRuntime(t, "runc")
	other := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"sleep", "600"}})
	if err := r.Run("other", other); err != nil {
		t.Fatal(err)
	}
	otherState, err := r.State("other")
	if err != nil {
		t.Fatal(err)
	}
	mine := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"true"}})
	live := otherState.Pid
	pod := func(mod func(map[string]string)) map[string]string {
		a := e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app")
		mod(a)
		return a
	}
	st := func(pid int, a map[string]string) []byte {
		return e2e.StateJSON(t, specs.State{Version: "1.0.2", ID: "bad", Status: specs.StateCreating, Pid: pid, Annotations: a})
	}
	cases := []struct {
		name, want string
		in         []byte
	}{
		{"empty stdin", "empty input", nil},
		{"truncated JSON", "unexpected end of JSON", []byte(`{"ociVersion":"1.0.2","id":"bad","pid":`)},
		{"10 MB of garbage", "more than", bytes.Repeat([]byte("\x00garbage\xff"), 1<<20)},
		{"no pid", "no pid", []byte(`{"ociVersion":"1.0.2","id":"bad","status":"creating"}`)},
		{"pid 0", "no pid", st(0, nil)},
		{"negative pid", "negative pid", []byte(`{"id":"bad","pid":-7}`)},
		{"pid does not exist", "no such file", st(1<<30, e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app"))},
		{"a process of another container", "not in the container's cgroup", e2e.StateJSON(t, specs.State{ID: "bad", Pid: live,
			Bundle: mine.Dir, Annotations: e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app")})},
		{"../ in the sandbox id", "bad annotation", st(live, pod(func(a map[string]string) { a["io.kubernetes.cri-o.SandboxID"] = "../../etc" + e2e.SandboxOf('a')[9:] }))},
		{"/ in the pod uid", "bad annotation", st(live, pod(func(a map[string]string) { a["io.kubernetes.pod.uid"] = "6a1f3c2e/0000-4000-8000-00000000000a" }))},
		{"NUL in the pod uid", "bad annotation", st(live, pod(func(a map[string]string) { a["io.kubernetes.pod.uid"] = e2e.PodUIDA + "\x00" }))},
		{"100 KB value", "bad annotation", st(live, pod(func(a map[string]string) { a["io.kubernetes.cri-o.Labels"] = strings.Repeat("x", 100<<10) }))},
		{"non-UUID uid", "not a pod UID", st(live, pod(func(a map[string]string) { a["io.kubernetes.pod.uid"] = "my-pod" }))},
		{"spoofed pod uid", "does not add up", st(live, pod(func(a map[string]string) {
			a["io.kubernetes.cri-o.Labels"] = `{"io.kubernetes.pod.uid":"` + e2e.PodUIDB + `"}`
		}))},
		{"bad container id", "not a valid id", []byte(`{"id":"../../x","pid":1}`)},
	}
	for _, policy := range []string{"open", "closed"} {
		e.Config("failurePolicy: " + policy + "\n")
		for _, c := range cases {
			_ = os.Remove(e.LogPath)
			code, stderr := runHook(t, e.CfgPath, "createRuntime", c.in)
			want := map[string]int{"open": 0, "closed": 1}[policy]
			if code != want {
				t.Errorf("%s, %s: exit %d, want %d (stderr %q)", policy, c.name, code, want, stderr)
			}
			if policy == "closed" && !strings.Contains(stderr, c.want) {
				t.Errorf("%s, %s: stderr %q does not say %q", policy, c.name, stderr, c.want)
			}
			if n := e.LogLines("level=ERROR", c.want); n != 1 {
				t.Errorf("%s, %s: want one ERROR line saying %q in the log:\n%s", policy, c.name, c.want, e.Log())
			}
		}
	}
	if es, _ := os.ReadDir(filepath.Join(e.Sim.Dir, "mon_groups")); len(es) != 0 {
		t.Errorf("bad input made groups: %v", es)
	}
	if recs := e.Records(); len(recs) != 0 {
		t.Errorf("bad input made records: %v", recs)
	}
	// Nothing but the config, the log and the state dir in the test's directory.
	es, _ := os.ReadDir(e.Dir)
	for _, d := range es {
		if n := d.Name(); n != "config.yaml" && n != "hook.log" && n != "state" {
			t.Errorf("bad input wrote %s", filepath.Join(e.Dir, n))
		}
	}
}

// TestHookBadEnvironment: a resctrl root that is missing, not resctrl, or a symlink, and a
// state dir that cannot be written, each give a clear error under either policy.
func TestHookBadEnvironment(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "")
	p := startSleep(t)
	in := e2e.StateJSON(t, specs.State{ID: "c1", Pid: p, Annotations: e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app")})
	plain := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(e.Sim.Dir, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct{ cfg, want string }{
		"resctrl root missing":  {"resctrlRoot: /nonexistent/resctrl\n", "not a resctrl mount"},
		"not a resctrl mount":   {"resctrlRoot: " + plain + "\n", "not a resctrl mount"},
		"resctrl root symlink":  {"resctrlRoot: " + link + "\n", "symlink"},
		"simulator not allowed": {"resctrlSimulator: false\n", "set resctrlSimulator: true"},
		"state dir unwritable":  {"stateDir: " + filepath.Join(file, "state") + "\n", "state dir"},
		"bad config":            {"retention: soon\n", "duration"},
	} {
		for _, policy := range []string{"open", "closed"} {
			text := fmt.Sprintf("resctrlRoot: %s\nresctrlSimulator: true\nstateDir: %s\nlog: file:%s\nfailurePolicy: %s\n", e.Sim.Dir, e.StateDir, e.LogPath, policy)
			text = overrideYAML(text, c.cfg)
			if err := os.WriteFile(e.CfgPath, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stderr := runHook(t, e.CfgPath, "createRuntime", in)
			if want := map[string]int{"open": 0, "closed": 1}[policy]; code != want || (policy == "closed" && !strings.Contains(stderr, c.want)) {
				t.Errorf("%s, %s: exit %d, stderr %q; want exit %d saying %q", name, policy, code, stderr, want, c.want)
			}
		}
	}
	if es, _ := os.ReadDir(filepath.Join(e.Sim.Dir, "mon_groups")); len(es) != 0 {
		t.Errorf("made groups: %v", es)
	}
}

// overrideYAML replaces or adds top-level keys of base with those in over.
func overrideYAML(base, over string) string {
	lines := strings.Split(strings.TrimSpace(base), "\n")
	for _, o := range strings.Split(strings.TrimSpace(over), "\n") {
		key, _, _ := strings.Cut(o, ":")
		replaced := false
		for i, l := range lines {
			if strings.HasPrefix(l, key+":") {
				lines[i], replaced = o, true
			}
		}
		if !replaced {
			lines = append(lines, o)
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

func startSleep(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}
