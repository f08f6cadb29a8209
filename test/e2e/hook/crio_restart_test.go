package hook_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestCRIORestart restarts CRI-O while a pod runs, gracefully (SIGTERM) and then as a crash
// (SIGKILL), each time on the same root and state. CRI-O comes back with the containers
// still running under conmon, and resctrl-mon notices nothing: the pod keeps its group and
// RMID, every task stays placed, no hook runs at the restart (what CRI-O does then is logged).
// After the restarts a new container of the pod joins the same group, status shows the pod
// active with its three containers, and removing a container and then the pod ends the group
// with its .end snapshot.
func TestCRIORestart(t *testing.T) {
	t.Parallel()
	e, crio := newCRIOHookEnv(t, "retention: 0s\n")
	group := "mon_groups/" + e2e.PodUIDA
	pod, err := crio.RunPod(e2e.PodSpec{Name: "restarted", Namespace: "e2e", UID: e2e.PodUIDA, Kubelet: true})
	if err != nil {
		t.Fatal(err)
	}
	ids := e2e.RunForkers(t, e, crio.CRI, pod, "app", "sidecar")
	pids := containerPIDs(t, crio, ids)
	checkPlaced(t, e, group, pids)
	rmid := e.RMID(group)

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		hookMark, crioMark := logSize(t, e.LogPath), logSize(t, crio.Log)
		start := time.Now()
		if err := crio.Restart(sig); err != nil {
			t.Fatal(err)
		}
		t.Logf("CRI-O stopped by %v and up again in %v; what it logged at its start:\n%s", sig,
			time.Since(start).Round(time.Millisecond), crioStartLog(t, crio.Log, crioMark))
		// Observed with CRI-O 1.34: it restores its containers from its state and runc's,
		// and runs no hook for them.
		if calls := logSince(t, e.LogPath, hookMark); calls != "" {
			t.Errorf("hook calls during CRI-O's restart by %v:\n%s", sig, calls)
		}
		if got := containerPIDs(t, crio, ids); !maps.Equal(got, pids) {
			t.Fatalf("after a restart by %v CRI-O reports the containers' inits %v, want %v still running", sig, got, pids)
		}
		if !e.Exists(group) || e.RMID(group) != rmid {
			t.Fatalf("after a restart by %v the group is gone or has another RMID\n%s", sig, e.Log())
		}
		checkPlaced(t, e, group, pids)
		// Reconcile, reading CRI-O's runc root, finds nothing to repair.
		e.Settled()
	}

	late := e2e.RunForkers(t, e, crio.CRI, pod, "late")
	maps.Copy(ids, late)
	maps.Copy(pids, containerPIDs(t, crio, late))
	checkPlaced(t, e, group, pids)
	if e.RMID(group) != rmid {
		t.Errorf("a container started after the restarts moved the pod to another RMID")
	}
	if n := e.LogLines("stage=createRuntime", "container="+late["late"], "group="+group, "outcome=joined"); n != 1 {
		t.Errorf("the hook log has %d createRuntime lines for late joining %s, want 1:\n%s", n, group, e.Log())
	}
	p := statusOf(t, e, group)
	if p.State != inventory.Active || !slices.Equal(containerIDs(p), slices.Sorted(maps.Values(ids))) {
		t.Errorf("status after the restarts: %s with containers %v, want active with %v", p.State, containerIDs(p), slices.Sorted(maps.Values(ids)))
	}

	if err := crio.Stop(ids["app"]); err != nil {
		t.Fatal(err)
	}
	if err := crio.Remove(ids["app"]); err != nil {
		t.Fatal(err)
	}
	if n := e.LogLines("stage=poststop", "container="+ids["app"], "outcome=left"); n != 1 {
		t.Errorf("the hook log has %d poststop lines for app leaving the pod, want 1:\n%s", n, e.Log())
	}
	if !e.Exists(group) || e.RMID(group) != rmid {
		t.Fatalf("after one container's removal the group is gone or has another RMID\n%s", e.Log())
	}
	e.EndCRIPod(t, crio.CRI, pod.ID, group)
	if kinds := e2e.SnapshotKinds(t, e, e2e.PodUIDA); !slices.Equal(kinds, []snapshot.Kind{snapshot.Begin, snapshot.End}) {
		t.Errorf("snapshots of the pod %v, want one life's .begin and .end", kinds)
	}
}

// newCRIOHookEnv is a hook environment with the shipped hooks.d JSON in a CRI-O of its own,
// whose reconcile reads that CRI-O's runc root; extra is more configuration.
func newCRIOHookEnv(t *testing.T, extra string) (*e2e.HookEnv, *e2e.CRIO) {
	t.Helper()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "")
	crio := e.StartCRIOWithHooks(t, e2e.CRIOOptions{})
	e.Config(fmt.Sprintf("runtimeRoots: [%s]\n%s", crio.RuncRoot, extra))
	return e, crio
}

// containerPIDs asks CRI-O for each container's init.
func containerPIDs(t *testing.T, crio *e2e.CRIO, ids map[string]string) map[string]int {
	t.Helper()
	pids := map[string]int{}
	for name, id := range ids {
		pid, err := crio.PID(id)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pids[name] = pid
	}
	return pids
}

// checkPlaced checks that every task in the cgroup of each container's init is in group, and
// says how many.
func checkPlaced(t *testing.T, e *e2e.HookEnv, group string, pids map[string]int) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(pids)) {
		tids, err := e2e.CgroupTasks(pids[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		placed := e.PlacedOf(group, tids)
		t.Logf("%s: placed %d of %d", name, placed, len(tids))
		// The forker makes 4 children and a grandchild and locks 5 threads: at least 12 tasks.
		if placed != len(tids) || len(tids) < 12 {
			t.Errorf("%s: %d of %d tasks in %s\nthe hook said:\n%s", name, placed, len(tids), group, e.Log())
		}
	}
}

// statusOf is the group's row in `resctrl-mon status --json`.
func statusOf(t *testing.T, e *e2e.HookEnv, group string) inventory.Pod {
	t.Helper()
	st := e.Status()
	for _, p := range st.Groups {
		if p.Path == group {
			return p
		}
	}
	t.Fatalf("status has no %s: %+v", group, st)
	return inventory.Pod{}
}

// containerIDs are the ids of a status row's containers, sorted.
func containerIDs(p inventory.Pod) []string {
	var ids []string
	for _, c := range p.Containers {
		ids = append(ids, c.ID)
	}
	slices.Sort(ids)
	return ids
}

// logSize is a log file's size: where what is written next begins.
func logSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// logSince is what was written to a log file after offset.
func logSince(t *testing.T, path string, offset int64) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b[min(offset, int64(len(b))):])
}

// crioStartLog is what CRI-O logged after offset about its restart: its warnings and errors,
// and the lines about restoring, repairing or wiping its state, each cut short.
func crioStartLog(t *testing.T, path string, offset int64) string {
	t.Helper()
	var out []string
	for line := range strings.Lines(logSince(t, path, offset)) {
		l := strings.TrimSpace(line)
		lower := strings.ToLower(l)
		// Its whole configuration, and that it has no CRIU: at every start.
		if strings.Contains(l, "Current CRI-O configuration") || strings.Contains(l, "Checkpoint/restore") {
			continue
		}
		if !strings.Contains(l, "level=warning") && !strings.Contains(l, "level=error") && !strings.Contains(lower, "restor") &&
			!strings.Contains(lower, "unclean") && !strings.Contains(lower, "wip") && !strings.Contains(lower, "repair") {
			continue
		}
		if len(l) > 300 {
			l = l[:300] + "…"
		}
		out = append(out, "  "+l)
	}
	return strings.Join(out, "\n")
}

// TestReconcileAfterCRIOKilled: CRI-O is killed (SIGKILL) while two pods run, and one pod's
// containers die while it is down, so no poststop hook runs for them. The real reconcile,
// as the systemd unit runs it, finds the dead pod from runc's state under CRI-O's runc root:
// with a retention window its group is kept (idle, no .end yet), with retention 0 it is
// removed after its .end snapshot. The live pod's group and every one of its tasks, and a
// foreign group, are untouched. CRI-O started again then removes the dead pod (rmp) and
// its poststop hooks, for a group already gone, change nothing.
func TestReconcileAfterCRIOKilled(t *testing.T) {
	t.Parallel()
	e, crio := newCRIOHookEnv(t, "retention: 1h\n")
	gDead, gLive, foreign := "mon_groups/"+e2e.PodUIDA, "mon_groups/"+e2e.PodUIDB, "mon_groups/"+e2e.PodUIDC
	dead, err := crio.RunPod(e2e.PodSpec{Name: "dead", Namespace: "e2e", UID: e2e.PodUIDA, Kubelet: true})
	if err != nil {
		t.Fatal(err)
	}
	live, err := crio.RunPod(e2e.PodSpec{Name: "live", Namespace: "e2e", UID: e2e.PodUIDB, Kubelet: true})
	if err != nil {
		t.Fatal(err)
	}
	deadIDs := e2e.RunForkers(t, e, crio.CRI, dead, "app", "sidecar")
	liveIDs := e2e.RunForkers(t, e, crio.CRI, live, "app")
	deadPIDs, livePIDs := containerPIDs(t, crio, deadIDs), containerPIDs(t, crio, liveIDs)
	checkPlaced(t, e, gDead, deadPIDs)
	checkPlaced(t, e, gLive, livePIDs)
	if err := os.Mkdir(filepath.Join(e.Sim.Dir, foreign), 0o755); err != nil {
		t.Fatal(err)
	}
	liveRMID := e.RMID(gLive)
	var deadTasks []int
	for _, pid := range deadPIDs {
		tids, err := e2e.CgroupTasks(pid)
		if err != nil {
			t.Fatal(err)
		}
		deadTasks = append(deadTasks, tids...)
	}

	if err := crio.StopDaemon(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	hookMark := logSize(t, e.LogPath)
	// Each container has a PID namespace of its own: its init's death ends all of it.
	for _, pid := range deadPIDs {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	if err := poll.Until(10*time.Second, func() error {
		for _, tid := range deadTasks {
			if !procfs.Finished(tid) {
				return fmt.Errorf("task %d of the dead pod still runs", tid)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for name, id := range deadIDs {
		t.Logf("dead pod's %s: its conmon %s once its init was killed", name, conmonState(t, id))
	}
	if calls := logSince(t, e.LogPath, hookMark); strings.Contains(calls, "stage=poststop") {
		t.Fatalf("a poststop hook ran with CRI-O down:\n%s", calls)
	}
	if got := e.StateOf(gDead); got != string(inventory.Stopped) {
		t.Errorf("status says the dead pod is %s before reconcile, want stopped", got)
	}

	acts := e.Reconcile()
	t.Logf("reconcile (retention 1h): %+v", acts)
	if !e2e.HasAction(acts, "idle", gDead) || !e.Exists(gDead) || e.StateOf(gDead) != string(inventory.Idle) {
		t.Errorf("with a retention window the dead pod's group is not kept idle: %+v", acts)
	}
	if kinds := e2e.SnapshotKinds(t, e, e2e.PodUIDA); !slices.Equal(kinds, []snapshot.Kind{snapshot.Begin}) {
		t.Errorf("snapshots of the dead pod in its retention window %v, want its life's .begin only", kinds)
	}
	e.Settled()

	e.Config(fmt.Sprintf("runtimeRoots: [%s]\nretention: 0s\n", crio.RuncRoot))
	acts = e.Reconcile()
	t.Logf("reconcile (retention 0s): %+v", acts)
	if !e2e.HasAction(acts, "removed", gDead) || e.Exists(gDead) {
		t.Errorf("with retention 0 the dead pod's group is not removed: %+v", acts)
	}
	if kinds := e2e.SnapshotKinds(t, e, e2e.PodUIDA); !slices.Equal(kinds, []snapshot.Kind{snapshot.Begin, snapshot.End}) {
		t.Errorf("snapshots of the removed pod %v, want one life's .begin and .end", kinds)
	}
	for _, a := range acts {
		if a.Group != gDead {
			t.Errorf("reconcile acted on another group than the dead pod's: %+v", a)
		}
	}
	checkUntouched := func(when string) {
		t.Helper()
		if !e.Exists(gLive) || e.RMID(gLive) != liveRMID {
			t.Fatalf("%s: the live pod's group is gone or has another RMID", when)
		}
		checkPlaced(t, e, gLive, livePIDs)
		if recs := e.Records(); len(recs) != 1 || recs[0].Path != gLive {
			t.Errorf("%s: records %+v, want the live pod's only", when, recs)
		}
		if !e.Exists(foreign) {
			t.Errorf("%s: the foreign group %s was removed", when, foreign)
		}
	}
	checkUntouched("after reconcile")
	if p := statusOf(t, e, gLive); p.State != inventory.Active {
		t.Errorf("the live pod is %s, want active", p.State)
	}
	e.Settled()

	hookMark, crioMark := logSize(t, e.LogPath), logSize(t, crio.Log)
	if err := crio.StartDaemon(); err != nil {
		t.Fatal(err)
	}
	t.Logf("CRI-O started again; what it logged at its start:\n%s", crioStartLog(t, crio.Log, crioMark))
	if calls := logSince(t, e.LogPath, hookMark); calls != "" {
		t.Errorf("hook calls during CRI-O's start:\n%s", calls)
	}
	for name, id := range deadIDs {
		t.Logf("after the restart CRI-O says the dead pod's %s is %s", name, containerState(t, crio, id))
	}
	if got := containerPIDs(t, crio, liveIDs); !maps.Equal(got, livePIDs) {
		t.Fatalf("after the restart CRI-O reports the live pod's inits %v, want %v still running", got, livePIDs)
	}

	hookMark = logSize(t, e.LogPath)
	if err := crio.StopPod(dead.ID); err != nil {
		t.Fatal(err)
	}
	if err := crio.RemovePod(dead.ID); err != nil {
		t.Fatal(err)
	}
	calls := logSince(t, e.LogPath, hookMark)
	t.Logf("the hook calls of the dead pod's rmp:\n%s", calls)
	for name, id := range deadIDs {
		if n := e.LogLines("stage=poststop", "container="+id); n != 1 {
			t.Errorf("the hook log has %d poststop lines for the dead pod's %s, want 1 (at rmp):\n%s", n, name, calls)
		}
		// Its group is gone: the line says so, and whose container it was.
		if n := e.LogLines("stage=poststop", "container="+id, "pod="+e2e.PodUIDA, "outcome=skipped", "detail="); n != 1 {
			t.Errorf("the dead pod's %s: the poststop line does not name the pod or say why it was skipped:\n%s", name, calls)
		}
	}
	if e.Exists(gDead) {
		t.Errorf("the dead pod's poststop re-created its group")
	}
	checkUntouched("after the dead pod's rmp")
	if st := e.Status(); len(st.Failures) != 0 {
		t.Errorf("failures after the dead pod's rmp: %+v", st.Recent)
	}
}

// conmonState says whether the conmon of a container still runs.
func conmonState(t *testing.T, id string) string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range entries {
		comm, err := os.ReadFile(filepath.Join("/proc", de.Name(), "comm"))
		if err != nil || strings.TrimSpace(string(comm)) != "conmon" {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", de.Name(), "cmdline"))
		if err == nil && slices.Contains(strings.Split(string(cmdline), "\x00"), id) {
			return "still runs (pid " + de.Name() + ")"
		}
	}
	return "has exited"
}

// containerState is the state CRI-O reports for a container (crictl inspect).
func containerState(t *testing.T, crio *e2e.CRIO, id string) string {
	t.Helper()
	out, err := crio.Command("inspect", "--output", "go-template", "--template", "{{.status.state}} (exit code {{.status.exitCode}})", id)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
