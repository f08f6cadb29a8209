package reconcile_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// sleepers is a workload of a shell and two sleeps that lasts until the container is
// deleted: several tasks to place, without the forker's readiness wait.
var sleepers = []string{"sh", "-c", "sleep 600 & sleep 600 & wait"}

// The hook is killed between mkdir and the tasks write (the tasks write is made slow by
// fault injection): reconcile completes the pod, and status says it was late-assigned.
func TestReconcileHookKilledMidway(t *testing.T) {
	t.Parallel()
	e := e2e.NewRecEnv(t, resctrlsim.Options{}, "")
	b := e.Run("c1", e2e.PodUIDA, nil) // no hook in the bundle: the test runs it by hand
	st, err := e.R.State("c1")
	if err != nil {
		t.Fatal(err)
	}
	e.Sim.SetLatency(resctrlsim.OpTasksWrite, 5*time.Second)
	hook := exec.Command(e2e.Binaries.Hook, "--config", e.CfgPath, "createRuntime")
	hook.Stdin = strings.NewReader(string(e2e.StateJSON(t, specs.State{ID: "c1", Pid: st.Pid, Bundle: b.Dir, Annotations: b.Spec.Annotations})))
	if err := hook.Start(); err != nil {
		t.Fatal(err)
	}
	group := "mon_groups/" + e2e.PodUIDA
	if err := poll.Until(10*time.Second, func() error {
		if !e.Exists(group) {
			return fmt.Errorf("no group yet")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_ = hook.Process.Kill()
	_ = hook.Wait()
	e.Sim.SetLatency(resctrlsim.OpTasksWrite, 0)

	acts := e.Reconcile()
	if len(acts) == 0 {
		t.Fatalf("reconcile did nothing after the killed hook")
	}
	e.AllPlaced("c1", group)
	e.WantState(group, "late-assigned")
	e.Settled()
}

// A container killed with its runtime state left behind, and one deleted without its poststop
// ever running: reconcile sees them dead and removes their groups (retention 0).
func TestReconcileDeadContainers(t *testing.T) {
	t.Parallel()
	e := e2e.NewRecEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	// c1: the hook placed it; then its init is killed and runc's state stays behind.
	e.Run("c1", e2e.PodUIDA, e.Hooks())
	st, err := e.R.State("c1")
	if err != nil {
		t.Fatal(err)
	}
	// c2: its bundle lists only the createRuntime hook, so no poststop will run.
	onlyCreate := e.Hooks()
	onlyCreate.Poststop = nil
	e.Run("c2", e2e.PodUIDB, onlyCreate)
	if err := syscall.Kill(st.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.Remove("c2")
	gA, gB := "mon_groups/"+e2e.PodUIDA, "mon_groups/"+e2e.PodUIDB
	if err := poll.Until(10*time.Second, func() error {
		acts := e.Reconcile()
		if e.Exists(gA) || e.Exists(gB) {
			return fmt.Errorf("groups still there after %+v", acts)
		}
		return nil
	}); err != nil {
		t.Fatalf("%v\n%s", err, e.Log())
	}
	if recs := e.Records(); len(recs) != 0 {
		t.Errorf("registry entries left: %+v", recs)
	}
	e.Settled()
}

// resctrl re-mounted (every group gone while containers run) and a live pod's group deleted
// behind our back: reconcile re-creates them and puts every task back.
func TestReconcileGroupsGone(t *testing.T) {
	t.Parallel()
	e := e2e.NewRecEnv(t, resctrlsim.Options{}, "retention: 1h\n")
	e.Run("c1", e2e.PodUIDA, e.Hooks())
	e.Run("c2", e2e.PodUIDB, e.Hooks())
	gA, gB := "mon_groups/"+e2e.PodUIDA, "mon_groups/"+e2e.PodUIDB
	e.Sim.Reset()
	e.WantActions(e.Reconcile(), "after a re-mount", "recreated", gA, gB)
	e.AllPlaced("c1", gA)
	e.AllPlaced("c2", gB)
	e.Settled()
	e.RmdirBehindOurBack(gB)
	e.WantActions(e.Reconcile(), "after an rmdir behind our back", "recreated", gB)
	e.AllPlaced("c2", gB)
	e.WantState(gB, "late-assigned")
	e.Settled()
}

// An idle group (its pod gone, inside the retention window) deleted behind our back: its
// record goes too.
func TestReconcileIdleGroupDeleted(t *testing.T) {
	t.Parallel()
	e := e2e.NewRecEnv(t, resctrlsim.Options{}, "retention: 1h\n")
	e.Run("c1", e2e.PodUIDA, e.Hooks())
	e.Remove("c1")
	g := "mon_groups/" + e2e.PodUIDA
	if e.StateOf(g) != "idle" {
		t.Fatalf("status: %+v", e.Status())
	}
	e.RmdirBehindOurBack(g)
	e.SetConfig("retention: 0s\n")
	e.Reconcile()
	if len(e.Records()) != 0 {
		t.Errorf("the record of a deleted idle group survived: %+v", e.Records())
	}
	e.Settled()
}

// The state dir is wiped while pods run: reconcile refuses the groups it has no record of
// (another tool's look the same), and `reconcile --adopt`, the operator's word, takes back
// those that hold their pods' tasks and leaves foreign groups alone.
func TestReconcileStateWiped(t *testing.T) {
	t.Parallel()
	e := e2e.NewRecEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	e.Run("c1", e2e.PodUIDA, e.Hooks())
	// Foreign groups: another tool's pod-UID group (for a pod we never saw) and runc's own
	// per-container group.
	foreign := []string{"mon_groups/" + e2e.PodUIDC, "mon_groups/c1"}
	for _, g := range foreign {
		if err := os.Mkdir(filepath.Join(e.Sim.Dir, g), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(e.StateDir); err != nil {
		t.Fatal(err)
	}
	g := "mon_groups/" + e2e.PodUIDA
	e.WantActions(e.Reconcile(), "after the state dir was wiped", "refused", g)
	e.WantActions(e.Reconcile("--adopt"), "reconcile --adopt after the state dir was wiped", "adopted", g)
	e.WantState(g, "active") // the hook placed it whole before the wipe
	e.Settled()
	e.Remove("c1")
	e.Reconcile()
	for _, f := range foreign {
		if !e.Exists(f) {
			t.Errorf("foreign group %s was removed", f)
		}
	}
	if e.Exists(g) {
		t.Errorf("the adopted group outlived its pod")
	}
	e.Settled()
}

// A dead container whose pid now belongs to an unrelated process is not alive: its pod is not
// re-created and the unrelated process is not moved.
func TestReconcilePidReused(t *testing.T) {
	t.Parallel()
	e := e2e.NewRecEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	e.Run("c1", e2e.PodUIDA, nil) // no hook: only reconcile would ever place it
	real, err := e.R.State("c1")
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
	statePath := filepath.Join(e.R.Root, "c1", "state.json")
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
	if acts := e.Reconcile(); len(acts) != 0 {
		t.Errorf("a reused pid was taken for a live container: %+v", acts)
	}
	if e.Exists("mon_groups/" + e2e.PodUIDA) {
		t.Errorf("a group was made for a dead container")
	}
}

// RMIDs run out, the pod is pending; when RMIDs are free again reconcile completes it.
func TestReconcileCompletesPending(t *testing.T) {
	t.Parallel()
	e := e2e.NewRecEnv(t, resctrlsim.Options{NumRMIDs: 2}, "retention: 0s\n")
	e.Start("a", e2e.PodUIDA, sleepers, e.Hooks())
	e.Start("b", e2e.PodUIDB, sleepers, e.Hooks())
	gB := "mon_groups/" + e2e.PodUIDB
	if got := e.StateOf(gB); got != "pending" {
		t.Fatalf("pod B is %s, want pending", got)
	}
	e.WantActions(e.Reconcile(), "with no RMID free", "pending", gB)
	// Pod A's end frees its RMID (retention 0). Its poststop's sweep completes pending pods
	// (at most every 10 s, so it may or may not be this one); where it did not, reconcile does.
	e.Remove("a")
	if e.StateOf(gB) == "pending" {
		e.WantActions(e.Reconcile(), "with an RMID free", "completed", gB)
	}
	e.AllPlaced("b", gB)
	e.WantState(gB, "late-assigned")
	e.Settled()
}

// --dry-run reports what it would do and changes nothing.
func TestReconcileDryRun(t *testing.T) {
	t.Parallel()
	e := e2e.NewRecEnv(t, resctrlsim.Options{}, "")
	e.Run("c1", e2e.PodUIDA, e.Hooks())
	e.Sim.Reset()
	g := "mon_groups/" + e2e.PodUIDA
	e.WantActions(e.Reconcile("--dry-run"), "dry run", "recreated", g)
	if e.Exists(g) {
		t.Errorf("a dry run created a group")
	}
	e.WantActions(e.Reconcile(), "the real run after the dry run", "recreated", g)
}

// Reconcile runs over and over while containers start and stop with the hook: the per-pod
// locks keep them from interleaving, and the end state is the one without reconcile.
func TestReconcileWhileHooksRun(t *testing.T) {
	t.Parallel()
	e := e2e.NewRecEnv(t, resctrlsim.Options{}, "retention: 0s\n")
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
			cmd := exec.Command(e2e.Binaries.CLI, "--config", e.CfgPath, "reconcile")
			if out, err := cmd.CombinedOutput(); err != nil {
				done <- fmt.Errorf("reconcile: %w: %s", err, out)
				return
			}
		}
	}()
	uids := []string{e2e.PodUIDA, e2e.PodUIDB}
	for i := range 10 {
		e.Start(fmt.Sprintf("w%d", i), uids[i%2], sleepers, e.Hooks())
	}
	for i := range 5 { // half of them go again
		e.Remove(fmt.Sprintf("w%d", i))
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i := 5; i < 10; i++ {
		e.AllPlaced(fmt.Sprintf("w%d", i), "mon_groups/"+uids[i%2])
	}
	for _, r := range e.Records() {
		if len(r.Containers) == 0 {
			t.Errorf("record %s lost its containers", r.Group)
		}
	}
	e.Settled()
}
