package hook_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestHookPod: a pod of three containers under each runtime, each forking children and
// threads the moment it starts. Every task of every container is in the pod's group; the
// group survives one container's removal, goes after the last, and leaves begin and end
// snapshots.
func TestHookPod(t *testing.T) {
	for _, rt := range []string{"runc", "crun"} {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\n")
			r := e2e.PreparedRuntime(t, rt)
			group := "mon_groups/" + e2e.PodUIDA
			ids := []string{rt + "-app", rt + "-sidecar", rt + "-init"}
			for _, id := range ids {
				b := e.Bundle(e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "c"))
				if err := r.Run(id, b); err != nil {
					t.Fatal(err)
				}
				e2e.WaitReady(t, b)
			}
			rmid := e.RMID(group)
			for _, id := range ids {
				// Every thread of every process in the container's cgroup.
				if missing, total := e.Outside(r, id, group); missing != 0 || total < 12 {
					t.Errorf("%s: %d of %d tasks outside the pod's group", id, missing, total)
				}
			}
			if err := r.Delete(ids[0], true); err != nil {
				t.Fatal(err)
			}
			if !e.Exists(group) || e.RMID(group) != rmid {
				t.Fatalf("after one container went, the group is gone or has another RMID")
			}
			for _, id := range ids[1:] {
				if err := r.Delete(id, true); err != nil {
					t.Fatal(err)
				}
			}
			if e.Exists(group) {
				t.Errorf("the group outlived the pod's last container (retention 0)\n%s", e.Log())
			}
			lives := e2e.LifeSnapshots(t, e.SnapDir, e2e.PodUIDA)
			if len(lives) != 2 || lives[0].Kind != snapshot.Begin || lives[1].Kind != snapshot.End {
				t.Errorf("snapshots %v, want one life's .begin and .end", lives)
			}
			for _, n := range lives {
				if _, err := snapshot.ReadFile(filepath.Join(e.SnapDir, n.String())); err != nil {
					t.Errorf("%s snapshot: %v", n.Kind, err)
				}
			}
			if recs := e.Records(); len(recs) != 0 {
				t.Errorf("registry entries left: %+v", recs)
			}
			if n := e.LogLines("stage=createRuntime", "container="+ids[0], "group="+group, "duration="); n != 1 {
				t.Errorf("the hook log has %d lines for %s's createRuntime, want 1:\n%s", n, ids[0], e.Log())
			}
		})
	}
}

// TestHookPodmanPod: a real podman pod (`podman pod create`, `podman run --pod`) of three
// forking members, the shipped hooks.d JSON registered with --hooks-dir, under each runtime
// and failurePolicy closed. Every member starts, all share one group, the pod's, keyed by its
// infra container's id as podman names it in every member, with every task of every member in
// it; that is the only group: the infra container has none of its own. Removing the pod ends
// the group at the infra's poststop, however long the retention. Where the infra's own
// process goes is lifecycle's rule, not checked here.
func TestHookPodmanPod(t *testing.T) {
	for _, rt := range []string{"runc", "crun"} {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			if rt == "crun" {
				e2e.PrepareCrun(t)
			}
			// A long retention: what ends the pod's group at `pod rm` is the infra's poststop.
			e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 1h\nfailurePolicy: closed\n")
			hooksDir := t.TempDir()
			e.InstallShippedHooks(t, hooksDir)
			p := e2e.Podman(t)
			pod, err := p.CreatePod(e2e.PodOptions{Name: "e2e-pod-" + rt, Runtime: rt})
			if err != nil {
				t.Fatal(err)
			}
			group := "mon_groups/" + pod.InfraID
			var members []string
			for i := range 3 {
				id, err := p.Run(e2e.PodmanRunOptions{Runtime: rt, HooksDir: hooksDir, Pod: pod.Name, Name: fmt.Sprintf("%s-m%d", pod.Name, i),
					Rootfs: e.Rootfs, Args: []string{"forker"}, Detach: true})
				if err != nil {
					t.Fatalf("member %d did not start (failurePolicy closed): %v\n%s", i, err, e.Log())
				}
				members = append(members, id)
			}
			for _, id := range members {
				e2e.WaitPodmanReady(t, p, id)
				pid, err := p.PID(id)
				if err != nil {
					t.Fatal(err)
				}
				tids, err := e2e.CgroupTasks(pid)
				if err != nil {
					t.Fatal(err)
				}
				placed := e.PlacedOf(group, tids)
				t.Logf("%s: member %.12s: placed %d of %d tasks in %s", rt, id, placed, len(tids), group)
				if placed != len(tids) || len(tids) < 12 {
					t.Errorf("member %.12s: placed %d of %d tasks in the pod's group\n%s", id, placed, len(tids), e.Log())
				}
			}
			groups, err := os.ReadDir(filepath.Join(e.Sim.Dir, "mon_groups"))
			if err != nil {
				t.Fatal(err)
			}
			recs := e.Records()
			if len(groups) != 1 || groups[0].Name() != pod.InfraID || len(recs) != 1 || recs[0].Group != pod.InfraID {
				var names []string
				for _, g := range groups {
					names = append(names, g.Name())
				}
				t.Errorf("groups %v, %d registry entries: want only the pod's, %s\n%s", names, len(recs), pod.InfraID, e.Log())
			}
			e.EndPodmanPod(t, p, pod.ID, group)
			t.Logf("%s: what the hook did with the infra container:\n%s", rt, e.LogFor(pod.InfraID))
		})
	}
}

// TestRaceMadeVisible runs the same forking workload twice: placed by a late writer (a
// daemon that notices the container and writes its PID, as cAdvisor-style tools do), and by
// the hook. The late writer leaves the work forked before it out; the hook leaves none.
func TestRaceMadeVisible(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	r := e2e.PreparedRuntime(t, "runc")

	late := e2e.NewBundle(t, e.Rootfs, e2e.BundleOptions{Args: []string{"forker"}})
	if err := r.Run("late", late); err != nil {
		t.Fatal(err)
	}
	e2e.WaitReady(t, late)
	lateGroup := "mon_groups/late-writer"
	if err := os.Mkdir(filepath.Join(e.Sim.Dir, lateGroup), 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := r.State("late")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Sim.Dir, lateGroup, "tasks"), []byte(fmt.Sprint(st.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	lateMissing, lateTotal := e.Outside(r, "late", lateGroup)

	hooked := e.Bundle(e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app"))
	if err := r.Run("hooked", hooked); err != nil {
		t.Fatal(err)
	}
	e2e.WaitReady(t, hooked)
	hookMissing, hookTotal := e.Outside(r, "hooked", "mon_groups/"+e2e.PodUIDA)

	t.Logf("late writer: %d of %d tasks left out of the group; hook: %d of %d", lateMissing, lateTotal, hookMissing, hookTotal)
	if lateMissing == 0 {
		t.Errorf("the late writer left no task out: the race is not visible")
	}
	if hookMissing != 0 {
		t.Errorf("the hook left %d tasks out", hookMissing)
	}
}

// TestRetentionKeepsTheRMID: a container restarted inside the retention window keeps its
// pod's group and RMID; after the window the pod gets a new group.
func TestRetentionKeepsTheRMID(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 1h\n")
	r := e2e.PreparedRuntime(t, "runc")
	group := "mon_groups/" + e2e.PodUIDA
	ann := e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app")
	args := []string{"sh", "-c", "sleep 600"}
	if err := r.Run("c1", e.Bundle(ann, args...)); err != nil {
		t.Fatal(err)
	}
	rmid := e.RMID(group)
	if err := r.Delete("c1", true); err != nil {
		t.Fatal(err)
	}
	if !e.Exists(group) {
		t.Fatalf("the group went with its container inside the retention window")
	}
	if err := r.Run("c1-again", e.Bundle(ann, args...)); err != nil {
		t.Fatal(err)
	}
	if got := e.RMID(group); got != rmid {
		t.Errorf("restart inside the window: RMID %d, want %d", got, rmid)
	}
	if err := r.Delete("c1-again", true); err != nil {
		t.Fatal(err)
	}
	e.Config("retention: 1s\n")
	time.Sleep(1100 * time.Millisecond) // the window has to pass; nothing is measured
	if err := r.Run("c1-late", e.Bundle(ann, args...)); err != nil {
		t.Fatal(err)
	}
	if got := e.RMID(group); got == rmid {
		t.Errorf("restart after the window kept RMID %d", got)
	}
	// Each life has its own snapshots: the first one's pair, the second one's .begin.
	lives := e2e.LifeSnapshots(t, e.SnapDir, e2e.PodUIDA)
	if len(lives) != 3 || lives[1].Kind != snapshot.End || !lives[0].Life.Equal(lives[1].Life) || !lives[2].Life.After(lives[1].Life) {
		t.Fatalf("snapshots %v, want the first life's .begin and .end and the second life's .begin", lives)
	}
	if _, err := snapshot.ReadFile(filepath.Join(e.SnapDir, lives[1].String())); err != nil {
		t.Errorf("the first life's end snapshot: %v", err)
	}
}

// TestExhaustion: with RMIDs used up, containers still start (fail-open), the failure is
// logged with the kernel's words and the pod recorded as pending; fail-closed refuses the
// container with a message that says why.
func TestExhaustion(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{NumRMIDs: 2}, "")
	r := e2e.PreparedRuntime(t, "runc")
	args := []string{"sh", "-c", "sleep 600"}
	if err := r.Run("a", e.Bundle(e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app"), args...)); err != nil {
		t.Fatal(err)
	}
	if err := r.Run("b", e.Bundle(e2e.CRIOPod(e2e.PodUIDB, e2e.SandboxOf('b'), "app"), args...)); err != nil {
		t.Fatalf("fail-open: the container did not start: %v", err)
	}
	if n := e.LogLines("container=b", "outcome=pending", "Out of RMIDs"); n != 1 {
		t.Errorf("the log does not say pod B is pending for want of RMIDs:\n%s", e.Log())
	}
	if rec := e.ReadRecordFile(e2e.PodUIDB); rec["pending"] == nil {
		t.Errorf("pod B is not recorded as pending: %v", rec)
	}
	e.Config("failurePolicy: closed\n")
	err := r.Run("c", e.Bundle(e2e.CRIOPod(e2e.PodUIDC, e2e.SandboxOf('c'), "app"), args...))
	if err == nil || !strings.Contains(err.Error(), "no free RMID") {
		t.Errorf("fail-closed: %v", err)
	}
}

// TestManyContainers: fifty containers of five pods started in parallel make exactly five
// groups with every task placed; removing them all leaves no group and no registry entry.
func TestManyContainers(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	r := e2e.PreparedRuntime(t, "runc")
	uids := []string{e2e.PodUIDA, e2e.PodUIDB, e2e.PodUIDC, "6a1f3c2e-0000-4000-8000-00000000000d", "6a1f3c2e-0000-4000-8000-00000000000e"}
	const n = 50
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			b := e.Bundle(e2e.CRIOPod(uids[i%5], e2e.SandboxOf("abcde"[i%5]), "c"), "sh", "-c", "sleep 600 & sleep 600 & wait")
			errs <- r.Run(fmt.Sprintf("m%02d", i), b)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	es, _ := os.ReadDir(filepath.Join(e.Sim.Dir, "mon_groups"))
	if len(es) != 5 {
		t.Errorf("%d groups, want 5", len(es))
	}
	for i := range n {
		id := fmt.Sprintf("m%02d", i)
		err := poll.Until(10*time.Second, func() error {
			if missing, total := e.Outside(r, id, "mon_groups/"+uids[i%5]); missing != 0 || total < 3 {
				return fmt.Errorf("%s: %d of %d tasks outside the group; the hook said:\n%s\nsimulator: %+v",
					id, missing, total, e.LogFor(id), e.Sim.Status().Stats)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := r.Delete(fmt.Sprintf("m%02d", i), true); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	es, _ = os.ReadDir(filepath.Join(e.Sim.Dir, "mon_groups"))
	if len(es) != 0 || len(e.Records()) != 0 {
		t.Errorf("after removing every container: %d groups, %d registry entries\n%s", len(es), len(e.Records()), e.Log())
	}
}
