package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// RecEnv is a hook environment whose reconcile reads this test's runc root only.
type RecEnv struct {
	*HookEnv
	R *Runtime
}

// NewRecEnv is a HookEnv with a runc of its own whose root the config names (runtimeRoots),
// and extra appended to the config.
func NewRecEnv(t *testing.T, simOpts resctrlsim.Options, extra string) *RecEnv {
	t.Helper()
	e := NewHookEnv(t, simOpts, "")
	r := PreparedRuntime(t, "runc")
	re := &RecEnv{HookEnv: e, R: r}
	re.SetConfig(extra)
	return re
}

// SetConfig rewrites the config with this runc's root and extra.
func (e *RecEnv) SetConfig(extra string) {
	e.Config(fmt.Sprintf("runtimeRoots: [%s]\n%s", e.R.Root, extra))
}

// Reconcile runs `resctrl-mon reconcile --json` and returns its actions.
func (e *HookEnv) Reconcile(args ...string) []lifecycle.Step {
	e.T.Helper()
	cmd := exec.Command(Binaries.CLI, append([]string{"--config", e.CfgPath, "reconcile", "--json"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		e.T.Fatalf("reconcile: %v: %s%s\n%s", err, out, stderr, e.Log())
	}
	var res struct {
		Actions []lifecycle.Step `json:"actions"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		e.T.Fatalf("reconcile output %q: %v", out, err)
	}
	return res.Actions
}

// Settled runs reconcile once more and fails if it changes anything: reconcile is idempotent.
func (e *HookEnv) Settled() {
	e.T.Helper()
	if acts := e.Reconcile(); len(acts) != 0 {
		e.T.Errorf("a second reconcile still acted: %+v", acts)
	}
}

// Status runs `resctrl-mon status --json`.
func (e *HookEnv) Status() inventory.Status {
	e.T.Helper()
	out, err := exec.Command(Binaries.CLI, "--config", e.CfgPath, "status", "--json").Output()
	if err != nil {
		e.T.Fatalf("status: %v: %s", err, out)
	}
	var st inventory.Status
	if err := json.Unmarshal(out, &st); err != nil {
		e.T.Fatalf("status output %q: %v", out, err)
	}
	return st
}

// StateOf is the state status reports for group ("absent" when it lists none).
func (e *HookEnv) StateOf(group string) string {
	for _, g := range e.Status().Groups {
		if g.Path == group {
			return string(g.State)
		}
	}
	return "absent"
}

// HasAction says whether reconcile reported action on group.
func HasAction(acts []lifecycle.Step, action, group string) bool {
	return slices.ContainsFunc(acts, func(a lifecycle.Step) bool { return string(a.Action) == action && a.Group == group })
}

// WantActions fails the test unless acts, a reconcile's (when says which), hold action on
// every one of groups.
func (e *HookEnv) WantActions(acts []lifecycle.Step, when, action string, groups ...string) {
	e.T.Helper()
	for _, g := range groups {
		if !HasAction(acts, action, g) {
			e.T.Errorf("%s: no %s %s in %+v", when, action, g, acts)
			return
		}
	}
}

// WantState fails the test unless status reports group in state want.
func (e *HookEnv) WantState(group, want string) {
	e.T.Helper()
	if got := e.StateOf(group); got != want {
		e.T.Errorf("status says %s is %s, want %s", group, got, want)
	}
}

// RmdirBehindOurBack deletes a group as another tool would (a runtime applying its RDT
// configuration deletes groups it thinks empty), without the registry knowing.
func (e *HookEnv) RmdirBehindOurBack(group string) {
	e.T.Helper()
	if err := syscall.Rmdir(filepath.Join(e.Sim.Dir, group)); err != nil {
		e.T.Fatal(err)
	}
}

// Start starts a container id of pod uid running args with hooks (nil: none), named id in
// the pod, and returns without waiting for its workload.
func (e *RecEnv) Start(id, uid string, args []string, hooks *specs.Hooks) *Bundle {
	e.T.Helper()
	b := NewBundle(e.T, e.Rootfs, BundleOptions{Args: args, Annotations: CRIOPod(uid, SandboxOf('a'), id), Hooks: hooks})
	if err := e.R.Run(id, b); err != nil {
		e.T.Fatal(err)
	}
	return b
}

// Run starts a forker container of pod uid with hooks and waits until it is ready.
func (e *RecEnv) Run(id, uid string, hooks *specs.Hooks) *Bundle {
	e.T.Helper()
	b := e.Start(id, uid, []string{"forker"}, hooks)
	WaitReady(e.T, b)
	return b
}

// Remove force-deletes a container (runc delete --force): its init dies and runc runs its
// poststop hooks.
func (e *RecEnv) Remove(id string) {
	e.T.Helper()
	if err := e.R.Delete(id, true); err != nil {
		e.T.Fatal(err)
	}
}

// AllPlaced fails the test unless every task of container id is in group.
func (e *RecEnv) AllPlaced(id, group string) {
	e.T.Helper()
	if missing, total := e.Outside(e.R, id, group); missing != 0 {
		e.T.Errorf("%s: %d of %d tasks outside %s", id, missing, total, group)
	}
}
