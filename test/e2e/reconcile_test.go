package e2e_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// recEnv is a hook environment whose reconcile reads this test's runc root only.
type recEnv struct {
	*hookEnv
	r *e2e.Runtime
}

func newRecEnv(t *testing.T, simOpts resctrlsim.Options, extra string) *recEnv {
	t.Helper()
	e := newHookEnv(t, simOpts, "")
	r := newRuntime(t, "runc")
	re := &recEnv{hookEnv: e, r: r}
	re.setConfig(extra)
	return re
}

func (e *recEnv) setConfig(extra string) {
	e.config(fmt.Sprintf("runtimeRoots: [%s]\n%s", e.r.Root, extra))
}

// reconcile runs `resctrl-mon reconcile --json` and returns its actions.
func (e *hookEnv) reconcile(args ...string) []lifecycle.Step {
	e.t.Helper()
	cmd := exec.Command(binaries.cli, append([]string{"--config", e.cfgPath, "reconcile", "--json"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		e.t.Fatalf("reconcile: %v: %s%s\n%s", err, out, stderr, e.log())
	}
	var res struct {
		Actions []lifecycle.Step `json:"actions"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		e.t.Fatalf("reconcile output %q: %v", out, err)
	}
	return res.Actions
}

// settled runs reconcile once more and fails if it changes anything: reconcile is idempotent.
func (e *hookEnv) settled() {
	e.t.Helper()
	if acts := e.reconcile(); len(acts) != 0 {
		e.t.Errorf("a second reconcile still acted: %+v", acts)
	}
}

func (e *hookEnv) status() inventory.Status {
	e.t.Helper()
	out, err := exec.Command(binaries.cli, "--config", e.cfgPath, "status", "--json").Output()
	if err != nil {
		e.t.Fatalf("status: %v: %s", err, out)
	}
	var st inventory.Status
	if err := json.Unmarshal(out, &st); err != nil {
		e.t.Fatalf("status output %q: %v", out, err)
	}
	return st
}

func (e *hookEnv) stateOf(group string) string {
	for _, g := range e.status().Groups {
		if g.Path == group {
			return string(g.State)
		}
	}
	return "absent"
}

func hasAction(acts []lifecycle.Step, action, group string) bool {
	return slices.ContainsFunc(acts, func(a lifecycle.Step) bool { return string(a.Action) == action && a.Group == group })
}

// wantActions fails the test unless acts, a reconcile's (when says which), hold action on
// every one of groups.
func (e *hookEnv) wantActions(acts []lifecycle.Step, when, action string, groups ...string) {
	e.t.Helper()
	for _, g := range groups {
		if !hasAction(acts, action, g) {
			e.t.Errorf("%s: no %s %s in %+v", when, action, g, acts)
			return
		}
	}
}

// wantState fails the test unless status reports group in state want.
func (e *hookEnv) wantState(group, want string) {
	e.t.Helper()
	if got := e.stateOf(group); got != want {
		e.t.Errorf("status says %s is %s, want %s", group, got, want)
	}
}

// rmdirBehindOurBack deletes a group as another tool would (a runtime applying its RDT
// configuration deletes groups it thinks empty), without the registry knowing.
func (e *hookEnv) rmdirBehindOurBack(group string) {
	e.t.Helper()
	if err := syscall.Rmdir(filepath.Join(e.sim.Dir, group)); err != nil {
		e.t.Fatal(err)
	}
}

// start starts a container id of pod uid running args with hooks (nil: none), named id in
// the pod, and returns without waiting for its workload.
func (e *recEnv) start(id, uid string, args []string, hooks *specs.Hooks) *e2e.Bundle {
	e.t.Helper()
	b := e2e.NewBundle(e.t, e.rootfs, e2e.BundleOptions{Args: args, Annotations: crioPod(uid, sandboxOf('a'), id), Hooks: hooks})
	if err := e.r.Run(id, b); err != nil {
		e.t.Fatal(err)
	}
	return b
}

// run starts a forker container of pod uid with hooks and waits until it is ready.
func (e *recEnv) run(id, uid string, hooks *specs.Hooks) *e2e.Bundle {
	e.t.Helper()
	b := e.start(id, uid, []string{"forker"}, hooks)
	waitReady(e.t, b)
	return b
}

// remove force-deletes a container (runc delete --force): its init dies and runc runs its
// poststop hooks.
func (e *recEnv) remove(id string) {
	e.t.Helper()
	if err := e.r.Delete(id, true); err != nil {
		e.t.Fatal(err)
	}
}

// sleepers is a workload of a shell and two sleeps that lasts until the container is
// deleted: several tasks to place, without the forker's readiness wait.
var sleepers = []string{"sh", "-c", "sleep 600 & sleep 600 & wait"}

func (e *recEnv) allPlaced(id, group string) {
	e.t.Helper()
	if missing, total := e.outside(e.r, id, group); missing != 0 {
		e.t.Errorf("%s: %d of %d tasks outside %s", id, missing, total, group)
	}
}

// The hook is killed between mkdir and the tasks write (the tasks write is made slow by
// fault injection): reconcile completes the pod, and status says it was late-assigned.
func TestReconcileHookKilledMidway(t *testing.T) {
	t.Parallel()
	e := newRecEnv(t, resctrlsim.Options{}, "")
	b := e.run("c1", uidA, nil) // no hook in the bundle: the test runs it by hand
	st, err := e.r.State("c1")
	if err != nil {
		t.Fatal(err)
	}
	e.sim.SetLatency(resctrlsim.OpTasksWrite, 5*time.Second)
	hook := exec.Command(binaries.hook, "--config", e.cfgPath, "createRuntime")
	hook.Stdin = strings.NewReader(string(stateJSON(t, specs.State{ID: "c1", Pid: st.Pid, Bundle: b.Dir, Annotations: b.Spec.Annotations})))
	if err := hook.Start(); err != nil {
		t.Fatal(err)
	}
	group := "mon_groups/" + uidA
	if err := poll.Until(10*time.Second, func() error {
		if !e.exists(group) {
			return fmt.Errorf("no group yet")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_ = hook.Process.Kill()
	_ = hook.Wait()
	e.sim.SetLatency(resctrlsim.OpTasksWrite, 0)

	acts := e.reconcile()
	if len(acts) == 0 {
		t.Fatalf("reconcile did nothing after the killed hook")
	}
	e.allPlaced("c1", group)
	e.wantState(group, "late-assigned")
	e.settled()
}

// A container killed with its runtime state left behind, and one deleted without its poststop
// ever running: reconcile sees them dead and removes their groups (retention 0).
func TestReconcileDeadContainers(t *testing.T) {
	t.Parallel()
	e := newRecEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	// c1: the hook placed it; then its init is killed and runc's state stays behind.
	e.run("c1", uidA, e.hooks())
	st, err := e.r.State("c1")
	if err != nil {
		t.Fatal(err)
	}
	// c2: its bundle lists only the createRuntime hook, so no poststop will run.
	onlyCreate := e.hooks()
	onlyCreate.Poststop = nil
	e.run("c2", uidB, onlyCreate)
	if err := syscall.Kill(st.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.remove("c2")
	gA, gB := "mon_groups/"+uidA, "mon_groups/"+uidB
	if err := poll.Until(10*time.Second, func() error {
		acts := e.reconcile()
		if e.exists(gA) || e.exists(gB) {
			return fmt.Errorf("groups still there after %+v", acts)
		}
		return nil
	}); err != nil {
		t.Fatalf("%v\n%s", err, e.log())
	}
	if recs := e.records(); len(recs) != 0 {
		t.Errorf("registry entries left: %+v", recs)
	}
	e.settled()
}

// resctrl re-mounted (every group gone while containers run) and a live pod's group deleted
// behind our back: reconcile re-creates them and puts every task back.
func TestReconcileGroupsGone(t *testing.T) {
	t.Parallel()
	e := newRecEnv(t, resctrlsim.Options{}, "retention: 1h\n")
	e.run("c1", uidA, e.hooks())
	e.run("c2", uidB, e.hooks())
	gA, gB := "mon_groups/"+uidA, "mon_groups/"+uidB
	e.sim.Reset()
	e.wantActions(e.reconcile(), "after a re-mount", "recreated", gA, gB)
	e.allPlaced("c1", gA)
	e.allPlaced("c2", gB)
	e.settled()
	e.rmdirBehindOurBack(gB)
	e.wantActions(e.reconcile(), "after an rmdir behind our back", "recreated", gB)
	e.allPlaced("c2", gB)
	e.wantState(gB, "late-assigned")
	e.settled()
}

// An idle group (its pod gone, inside the retention window) deleted behind our back: its
// record goes too.
func TestReconcileIdleGroupDeleted(t *testing.T) {
	t.Parallel()
	e := newRecEnv(t, resctrlsim.Options{}, "retention: 1h\n")
	e.run("c1", uidA, e.hooks())
	e.remove("c1")
	g := "mon_groups/" + uidA
	if e.stateOf(g) != "idle" {
		t.Fatalf("status: %+v", e.status())
	}
	e.rmdirBehindOurBack(g)
	e.setConfig("retention: 0s\n")
	e.reconcile()
	if len(e.records()) != 0 {
		t.Errorf("the record of a deleted idle group survived: %+v", e.records())
	}
	e.settled()
}

// The state dir is wiped while pods run: reconcile refuses the groups it has no record of
// (another tool's look the same), and `reconcile --adopt`, the operator's word, takes back
// those that hold their pods' tasks and leaves foreign groups alone.
func TestReconcileStateWiped(t *testing.T) {
	t.Parallel()
	e := newRecEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	e.run("c1", uidA, e.hooks())
	// Foreign groups: another tool's pod-UID group (for a pod we never saw) and runc's own
	// per-container group.
	foreign := []string{"mon_groups/" + uidC, "mon_groups/c1"}
	for _, g := range foreign {
		if err := os.Mkdir(filepath.Join(e.sim.Dir, g), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(e.stateDir); err != nil {
		t.Fatal(err)
	}
	g := "mon_groups/" + uidA
	e.wantActions(e.reconcile(), "after the state dir was wiped", "refused", g)
	e.wantActions(e.reconcile("--adopt"), "reconcile --adopt after the state dir was wiped", "adopted", g)
	e.wantState(g, "active") // the hook placed it whole before the wipe
	e.settled()
	e.remove("c1")
	e.reconcile()
	for _, f := range foreign {
		if !e.exists(f) {
			t.Errorf("foreign group %s was removed", f)
		}
	}
	if e.exists(g) {
		t.Errorf("the adopted group outlived its pod")
	}
	e.settled()
}

// A dead container whose pid now belongs to an unrelated process is not alive: its pod is not
// re-created and the unrelated process is not moved.
func TestReconcilePidReused(t *testing.T) {
	t.Parallel()
	e := newRecEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	e.run("c1", uidA, nil) // no hook: only reconcile would ever place it
	real, err := e.r.State("c1")
	if err != nil {
		t.Fatal(err)
	}
	// The forged state sends runc's force-delete to the stranger: the container's own init
	// (its pid namespace's, so all of it) is killed here, or it runs on after the test.
	t.Cleanup(func() { _ = syscall.Kill(real.Pid, syscall.SIGKILL) })
	// Forge runc's state as a crashed runtime would leave it after the init died and its
	// pid went to another process.
	stranger := exec.Command("sleep", "600")
	if err := stranger.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stranger.Process.Kill(); _ = stranger.Wait() })
	statePath := filepath.Join(e.r.Root, "c1", "state.json")
	var st map[string]any
	b, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	st["init_process_pid"] = stranger.Process.Pid
	b, _ = json.Marshal(st)
	if err := os.WriteFile(statePath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if acts := e.reconcile(); len(acts) != 0 {
		t.Errorf("a reused pid was taken for a live container: %+v", acts)
	}
	if e.exists("mon_groups/" + uidA) {
		t.Errorf("a group was made for a dead container")
	}
}

// RMIDs run out, the pod is pending; when RMIDs are free again reconcile completes it.
func TestReconcileCompletesPending(t *testing.T) {
	t.Parallel()
	e := newRecEnv(t, resctrlsim.Options{NumRMIDs: 2}, "retention: 0s\n")
	e.start("a", uidA, sleepers, e.hooks())
	e.start("b", uidB, sleepers, e.hooks())
	gB := "mon_groups/" + uidB
	if got := e.stateOf(gB); got != "pending" {
		t.Fatalf("pod B is %s, want pending", got)
	}
	e.wantActions(e.reconcile(), "with no RMID free", "pending", gB)
	// Pod A's end frees its RMID (retention 0). Its poststop's sweep completes pending pods
	// (at most every 10 s, so it may or may not be this one); where it did not, reconcile does.
	e.remove("a")
	if e.stateOf(gB) == "pending" {
		e.wantActions(e.reconcile(), "with an RMID free", "completed", gB)
	}
	e.allPlaced("b", gB)
	e.wantState(gB, "late-assigned")
	e.settled()
}

// --dry-run reports what it would do and changes nothing.
func TestReconcileDryRun(t *testing.T) {
	t.Parallel()
	e := newRecEnv(t, resctrlsim.Options{}, "")
	e.run("c1", uidA, e.hooks())
	e.sim.Reset()
	g := "mon_groups/" + uidA
	e.wantActions(e.reconcile("--dry-run"), "dry run", "recreated", g)
	if e.exists(g) {
		t.Errorf("a dry run created a group")
	}
	e.wantActions(e.reconcile(), "the real run after the dry run", "recreated", g)
}

// Reconcile runs over and over while containers start and stop with the hook: the per-pod
// locks keep them from interleaving, and the end state is the one without reconcile.
func TestReconcileWhileHooksRun(t *testing.T) {
	t.Parallel()
	e := newRecEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			cmd := exec.Command(binaries.cli, "--config", e.cfgPath, "reconcile")
			if out, err := cmd.CombinedOutput(); err != nil {
				done <- fmt.Errorf("reconcile: %w: %s", err, out)
				return
			}
		}
	}()
	uids := []string{uidA, uidB}
	for i := range 10 {
		e.start(fmt.Sprintf("w%d", i), uids[i%2], sleepers, e.hooks())
	}
	for i := range 5 { // half of them go again
		e.remove(fmt.Sprintf("w%d", i))
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i := 5; i < 10; i++ {
		e.allPlaced(fmt.Sprintf("w%d", i), "mon_groups/"+uids[i%2])
	}
	for _, r := range e.records() {
		if len(r.Containers) == 0 {
			t.Errorf("record %s lost its containers", r.Group)
		}
	}
	e.settled()
}
