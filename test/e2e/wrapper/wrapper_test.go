package wrapper_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// wrapped is runc driven directly (plain) and through resctrl-mon-runtime (wrapper), on the
// same containers, the wrapper reading the HookEnv's config with runtime and runtimeHook set.
type wrapped struct {
	plain, wrapper *e2e.Runtime
}

func newWrapped(t *testing.T, e *e2e.HookEnv, extra string) wrapped {
	t.Helper()
	return newWrappedOf(t, e, "runc", extra)
}

func newWrappedOf(t *testing.T, e *e2e.HookEnv, runtime, extra string) wrapped {
	t.Helper()
	plain := e2e.PreparedRuntime(t, runtime)
	e.Config(fmt.Sprintf("runtime: %s\nruntimeHook: %s\n%s", plain.Bin, e2e.Binaries.Hook, extra))
	return wrapped{plain: plain, wrapper: plain.Via(e2e.Binaries.Wrapper, config.ConfigEnv+"="+e.CfgPath)}
}

// execForker execs the forker in container id through r and waits until all its children
// and threads exist; it returns every task of the exec'd tree.
func execForker(t *testing.T, r *e2e.Runtime, id string) []int {
	t.Helper()
	out := filepath.Join(t.TempDir(), "exec.out")
	pid, err := r.Exec(id, out, "forker")
	if err != nil {
		t.Fatal(err)
	}
	var tids []int
	err = poll.Until(20*time.Second, func() error {
		b, _ := os.ReadFile(out)
		if !strings.Contains(string(b), "ready") {
			return fmt.Errorf("exec'd forker not ready: %q", b)
		}
		tids, err = e2e.TreeTasks(pid)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tids) < 12 {
		t.Fatalf("the exec'd tree has %d tasks, want the forker's 12 or more", len(tids))
	}
	return tids
}

// TestWrapperRunAndExec, under runc and crun: a container run through the wrapper from a
// bundle with no hooks is placed (the wrapper listed the hooks); a forking process exec'd
// through the plain runtime is left
// outside the pod's group, the same exec'd through the wrapper is in it from its first
// instruction, every task of its tree; deleting through the wrapper runs the poststop hook.
func TestWrapperRunAndExec(t *testing.T) {
	for _, rt := range []string{"runc", "crun"} {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			testWrapperRunAndExec(t, rt)
		})
	}
}

func testWrapperRunAndExec(t *testing.T, rt string) {
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "")
	w := newWrappedOf(t, e, rt, "retention: 0s\n")
	group := "mon_groups/" + e2e.PodUIDA
	b := e.PlainBundle(e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app"))
	if err := w.wrapper.Run("c1", b); err != nil {
		t.Fatalf("%v\n%s", err, e.Log())
	}
	e2e.WaitReady(t, b)
	missing, total := e.Outside(w.plain, "c1", group)
	t.Logf("%s run through the wrapper: placed %d of %d tasks of the container", rt, total-missing, total)
	if missing != 0 || total < 12 {
		t.Errorf("run through the wrapper: %d of %d tasks outside the pod's group\n%s", missing, total, e.Log())
	}
	hooks := readSpecHooks(t, b.ConfigPath())
	if len(hooks.CreateRuntime) != 1 || len(hooks.Poststop) != 1 || hooks.CreateRuntime[0].Path != e2e.Binaries.Hook {
		t.Errorf("config.json hooks after the wrapper: %+v", hooks)
	}

	plainTree := execForker(t, w.plain, "c1")
	wrapTree := execForker(t, w.wrapper, "c1")
	plainPlaced, wrapPlaced := e.PlacedOf(group, plainTree), e.PlacedOf(group, wrapTree)
	t.Logf("exec through plain %s: placed %d of %d tasks; through the wrapper: placed %d of %d", rt, plainPlaced, len(plainTree), wrapPlaced, len(wrapTree))
	if wrapPlaced != len(wrapTree) {
		t.Errorf("exec through the wrapper: placed %d of %d tasks\n%s", wrapPlaced, len(wrapTree), e.Log())
	}
	if plainPlaced == len(plainTree) {
		t.Errorf("exec through plain runc placed all %d tasks: the gap the wrapper closes is not visible", len(plainTree))
	}
	if n := e.LogLines("prog=resctrl-mon-runtime", "command=exec"); n != 0 {
		t.Errorf("an exec that went well was logged (exec probes would flood the log):\n%s", e.Log())
	}
	// The poststop hook the wrapper listed runs at delete. (Whether the group goes at once
	// is the lifecycle's call: exec'd processes killed with the container may still be
	// exiting, and a group with tasks is kept for the sweep.)
	if err := w.wrapper.Delete("c1", true); err != nil {
		t.Fatal(err)
	}
	if n := e.LogLines("stage=poststop", "container=c1 ", "group="+group); n != 1 {
		t.Errorf("the log has %d poststop lines for c1, want 1\n%s", n, e.Log())
	}
}

// TestWrapperCreateStart: create and start through the wrapper with global flags before the
// command; a second container from the same bundle finds the hooks there and the file is
// not rewritten; a bundle whose spec already lists the hook (as hooks.d would) is left
// byte for byte and its container placed once.
func TestWrapperCreateStart(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "")
	w := newWrapped(t, e, "")
	w.wrapper.GlobalArgs = []string{"--log", filepath.Join(t.TempDir(), "runc.log"), "--log-format", "json"}
	group := "mon_groups/" + e2e.PodUIDB
	b := e.PlainBundle(e2e.CRIOPod(e2e.PodUIDB, e2e.SandboxOf('b'), "app"))
	if err := w.wrapper.Create("c1", b); err != nil {
		t.Fatalf("%v\n%s", err, e.Log())
	}
	if err := w.wrapper.Start("c1"); err != nil {
		t.Fatal(err)
	}
	e2e.WaitReady(t, b)
	if missing, total := e.Outside(w.plain, "c1", group); missing != 0 || total < 12 {
		t.Errorf("create+start through the wrapper: %d of %d tasks outside\n%s", missing, total, e.Log())
	}
	before, err := os.Stat(b.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	// The same bundle again: the hooks are there, nothing is written.
	if err := w.wrapper.Create("c2", b); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(b.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Errorf("config.json was replaced although it had the hooks")
	}
	if h := readSpecHooks(t, b.ConfigPath()); len(h.CreateRuntime) != 1 || len(h.Poststop) != 1 {
		t.Errorf("hooks after two creates: %+v", h)
	}

	// A spec with the hook already (another config path in its args, as the test's hooks.d
	// would have): left as it is, the container placed once.
	listed := e.Bundle(e2e.CRIOPod(e2e.PodUIDB, e2e.SandboxOf('b'), "side"))
	orig, err := os.ReadFile(listed.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.wrapper.Run("c3", listed); err != nil {
		t.Fatal(err)
	}
	e2e.WaitReady(t, listed)
	if now, _ := os.ReadFile(listed.ConfigPath()); !bytes.Equal(now, orig) {
		t.Errorf("a spec that had the hooks was changed:\n%s\n→\n%s", orig, now)
	}
	if n := e.LogLines("stage=createRuntime", "container=c3 "); n != 1 {
		t.Errorf("c3's createRuntime hook ran %d times, want 1:\n%s", n, e.Log())
	}
	for _, id := range []string{"c1", "c2", "c3"} {
		if err := w.wrapper.Delete(id, true); err != nil {
			t.Error(err)
		}
	}
}

// TestWrapperExecGroupGone: the registry binds the container to a group that is no longer
// there (removed behind resctrl-mon's back); the wrapper's exec fails to join it: fail-open
// runs the process anyway and logs why, fail-closed refuses the exec, saying why.
func TestWrapperExecGroupGone(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "")
	w := newWrapped(t, e, "")
	group := "mon_groups/" + e2e.PodUIDB
	b := e.PlainBundle(e2e.CRIOPod(e2e.PodUIDB, e2e.SandboxOf('b'), "app"), "sleep", "600")
	if err := w.wrapper.Run("c1", b); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(e.Sim.Dir, group)); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := w.wrapper.Command("exec", "c1", "true"); err != nil {
		t.Errorf("fail-open: the exec did not run: %v: %s", err, stderr)
	}
	if n := e.LogLines("command=exec", "container=c1", "action=failed", group); n != 1 {
		t.Errorf("the log does not say the exec could not join %s:\n%s", group, e.Log())
	}
	e.Config(fmt.Sprintf("runtime: %s\nruntimeHook: %s\nfailurePolicy: closed\n", w.plain.Bin, e2e.Binaries.Hook))
	_, stderr, err := w.wrapper.Command("exec", "c1", "true")
	if exitCode(err) != 1 || !strings.Contains(string(stderr), "failurePolicy: closed") || !strings.Contains(string(stderr), group) {
		t.Errorf("fail-closed: %v, stderr %q; want exit 1 naming the policy and the group", err, stderr)
	}
	if err := w.wrapper.Delete("c1", true); err != nil {
		t.Error(err)
	}
}

// TestWrapperUnwritableBundle: the wrapper cannot list the hooks (the bundle directory takes
// no new file); fail-open runs the container anyway, unplaced, and logs why; fail-closed
// refuses it, saying why.
func TestWrapperUnwritableBundle(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "")
	w := newWrapped(t, e, "")
	b := e.PlainBundle(e2e.CRIOPod(e2e.PodUIDC, e2e.SandboxOf('c'), "app"), "sleep", "600")
	for _, f := range []string{b.StdoutPath(), b.StderrPath()} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	immutable(t, b.Dir)
	if err := w.wrapper.Run("open", b); err != nil {
		t.Fatalf("fail-open: the container did not run: %v\n%s", err, e.Log())
	}
	if n := e.LogLines("command=run", "container=open", "action=failed", "config.json"); n != 1 {
		t.Errorf("the log does not say why the hooks were not listed:\n%s", e.Log())
	}
	if e.Exists("mon_groups/" + e2e.PodUIDC) {
		t.Errorf("a group was made although the hooks could not be listed")
	}
	e.Config(fmt.Sprintf("runtime: %s\nruntimeHook: %s\nfailurePolicy: closed\n", w.plain.Bin, e2e.Binaries.Hook))
	err := w.wrapper.Run("closed", b)
	if err == nil || !strings.Contains(err.Error(), "failurePolicy: closed") {
		t.Errorf("fail-closed: %v, want a refusal naming the policy", err)
	}
	if err := w.wrapper.Delete("open", true); err != nil {
		t.Error(err)
	}
}

// immutable makes dir take no new entry (chattr +i: files in it stay writable, a rename into
// it fails), undone at cleanup.
func immutable(t *testing.T, dir string) {
	t.Helper()
	chattr, err := exec.LookPath("chattr")
	if err != nil {
		t.Skipf("chattr: %v", err)
	}
	if out, err := exec.Command(chattr, "+i", dir).CombinedOutput(); err != nil {
		t.Skipf("chattr +i %s: %v: %s", dir, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(chattr, "-i", dir).CombinedOutput(); err != nil {
			t.Errorf("chattr -i %s: %v: %s", dir, err, out)
		}
	})
}

// TestWrapperBadInput: commands and flags the wrapper does not know reach runc untouched
// (runc's own answer, word for word and with its exit status); a missing real runtime is a
// clear error; a config.json that is not JSON is left as it is, and runc says what is wrong.
func TestWrapperBadInput(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "")
	w := newWrapped(t, e, "")
	bad := e.PlainBundle(nil, "true")
	if err := os.WriteFile(bad.ConfigPath(), []byte("{this is not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"frobnicate", "x"},
		{"create", "--no-such-flag", "x"},
		{"--no-such-global", "state", "x"},
		{"state", "no-such-container"},
		{"exec", "no-such-container", "true"},
		{"--version"},
		{"create", "--bundle", bad.Dir, "badjson"},
	} {
		po, pe, perr := w.plain.Command(args...)
		wo, we, werr := w.wrapper.Command(args...)
		pe, we = logTime.ReplaceAll(pe, nil), logTime.ReplaceAll(we, nil) // runc's log lines start with the second
		t.Logf("%q: runc says %q (%v)", args, bytes.TrimSpace(pe), perr)
		if !bytes.Equal(po, wo) || !bytes.Equal(pe, we) || exitCode(perr) != exitCode(werr) {
			t.Errorf("%q: through the wrapper %q %q (%v), runc alone %q %q (%v)", args, wo, we, werr, po, pe, perr)
		}
	}
	if b, _ := os.ReadFile(bad.ConfigPath()); string(b) != "{this is not json" {
		t.Errorf("a config.json that is not JSON was changed: %q", b)
	}
	if n := e.LogLines("container=badjson", "action=failed", "not a JSON object"); n != 1 {
		t.Errorf("the log does not say the spec is not JSON:\n%s", e.Log())
	}

	e.Config("runtime: /nonexistent/runc\n")
	_, stderr, err := w.wrapper.Command("state", "x")
	if exitCode(err) != 1 || !strings.Contains(string(stderr), "/nonexistent/runc") || !strings.Contains(string(stderr), "config key runtime") {
		t.Errorf("missing real runtime: %v, stderr %q; want exit 1 naming the runtime and its config key", err, stderr)
	}
}

var logTime = regexp.MustCompile(`time="[^"]*" `)

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// readSpecHooks reads the hooks of a config.json.
func readSpecHooks(t *testing.T, path string) specs.Hooks {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s specs.Spec
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if s.Hooks == nil {
		return specs.Hooks{}
	}
	return *s.Hooks
}
