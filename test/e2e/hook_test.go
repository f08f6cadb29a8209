package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/hooksd"
	"github.com/resctrl-mon/resctrl-mon/lib/hostinstall"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

const (
	uidA = "6a1f3c2e-0000-4000-8000-00000000000a"
	uidB = "6a1f3c2e-0000-4000-8000-00000000000b"
	uidC = "6a1f3c2e-0000-4000-8000-00000000000c"
)

// TestHookPod: a pod of three containers under each runtime, each forking children and
// threads the moment it starts. Every task of every container is in the pod's group; the
// group survives one container's removal, goes after the last, and leaves begin and end
// snapshots.
func TestHookPod(t *testing.T) {
	for _, rt := range []string{"runc", "crun"} {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			e := newHookEnv(t, resctrlsim.Options{}, "retention: 0s\n")
			r := newRuntime(t, rt)
			group := "mon_groups/" + uidA
			ids := []string{rt + "-app", rt + "-sidecar", rt + "-init"}
			for _, id := range ids {
				b := e.bundle(crioPod(uidA, sandboxOf('a'), "c"))
				if err := r.Run(id, b); err != nil {
					t.Fatal(err)
				}
				waitReady(t, b)
			}
			rmid := e.rmid(group)
			for _, id := range ids {
				// Every thread of every process in the container's cgroup.
				if missing, total := e.outside(r, id, group); missing != 0 || total < 12 {
					t.Errorf("%s: %d of %d tasks outside the pod's group", id, missing, total)
				}
			}
			if err := r.Delete(ids[0], true); err != nil {
				t.Fatal(err)
			}
			if !e.exists(group) || e.rmid(group) != rmid {
				t.Fatalf("after one container went, the group is gone or has another RMID")
			}
			for _, id := range ids[1:] {
				if err := r.Delete(id, true); err != nil {
					t.Fatal(err)
				}
			}
			if e.exists(group) {
				t.Errorf("the group outlived the pod's last container (retention 0)\n%s", e.log())
			}
			lives := lifeSnapshots(t, e.snapDir, uidA)
			if len(lives) != 2 || lives[0].Kind != snapshot.Begin || lives[1].Kind != snapshot.End {
				t.Errorf("snapshots %v, want one life's .begin and .end", lives)
			}
			for _, n := range lives {
				if _, err := snapshot.ReadFile(filepath.Join(e.snapDir, n.String())); err != nil {
					t.Errorf("%s snapshot: %v", n.Kind, err)
				}
			}
			if recs := e.records(); len(recs) != 0 {
				t.Errorf("registry entries left: %+v", recs)
			}
			if n := e.logLines("stage=createRuntime", "container="+ids[0], "group="+group, "duration="); n != 1 {
				t.Errorf("the hook log has %d lines for %s's createRuntime, want 1:\n%s", n, ids[0], e.log())
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
			e := newHookEnv(t, resctrlsim.Options{}, "retention: 1h\nfailurePolicy: closed\n")
			hooksDir := t.TempDir()
			e.installShippedHooks(t, hooksDir)
			p := e2e.Podman(t)
			pod, err := p.CreatePod(e2e.PodOptions{Name: "e2e-pod-" + rt, Runtime: rt})
			if err != nil {
				t.Fatal(err)
			}
			group := "mon_groups/" + pod.InfraID
			var members []string
			for i := range 3 {
				id, err := p.Run(e2e.PodmanRunOptions{Runtime: rt, HooksDir: hooksDir, Pod: pod.Name, Name: fmt.Sprintf("%s-m%d", pod.Name, i),
					Rootfs: e.rootfs, Args: []string{"forker"}, Detach: true})
				if err != nil {
					t.Fatalf("member %d did not start (failurePolicy closed): %v\n%s", i, err, e.log())
				}
				members = append(members, id)
			}
			for _, id := range members {
				waitPodmanReady(t, p, id)
				pid, err := p.PID(id)
				if err != nil {
					t.Fatal(err)
				}
				tids, err := e2e.CgroupTasks(pid)
				if err != nil {
					t.Fatal(err)
				}
				placed := e.placedOf(group, tids)
				t.Logf("%s: member %.12s: placed %d of %d tasks in %s", rt, id, placed, len(tids), group)
				if placed != len(tids) || len(tids) < 12 {
					t.Errorf("member %.12s: placed %d of %d tasks in the pod's group\n%s", id, placed, len(tids), e.log())
				}
			}
			groups, err := os.ReadDir(filepath.Join(e.sim.Dir, "mon_groups"))
			if err != nil {
				t.Fatal(err)
			}
			recs := e.records()
			if len(groups) != 1 || groups[0].Name() != pod.InfraID || len(recs) != 1 || recs[0].Group != pod.InfraID {
				var names []string
				for _, g := range groups {
					names = append(names, g.Name())
				}
				t.Errorf("groups %v, %d registry entries: want only the pod's, %s\n%s", names, len(recs), pod.InfraID, e.log())
			}
			e.endPodmanPod(t, p, pod.ID, group)
			t.Logf("%s: what the hook did with the infra container:\n%s", rt, e.logFor(pod.InfraID))
		})
	}
}

// waitPodmanReady waits until the forker in podman container id printed "ready".
func waitPodmanReady(t *testing.T, p *e2e.PodmanRunner, id string) {
	t.Helper()
	err := poll.Until(20*time.Second, func() error {
		out, err := p.Command("logs", id)
		if err != nil {
			return err
		}
		if !strings.Contains(string(out), "ready") {
			return fmt.Errorf("forker in %.12s not ready: %q", id, out)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// installHookJSON writes the hooks.d JSON named name as `make install` and `resctrl-mon
// host install` do (lib/hooksd, with the default timeout), pointing at the test's hook
// binary and passing it the test's config with --config.
func installHookJSON(t *testing.T, name, dir, cfgPath string) {
	t.Helper()
	files, err := hooksd.Files(hooksd.Options{HookPath: binaries.hook, ConfigPath: cfgPath, Timeout: hostinstall.DefaultTimeout})
	if err != nil {
		t.Fatal(err)
	}
	b, ok := files[name]
	if !ok {
		t.Fatalf("no hooks.d file %s", name)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRaceMadeVisible runs the same forking workload twice: placed by a late writer (a
// daemon that notices the container and writes its PID, as cAdvisor-style tools do), and by
// the hook. The late writer leaves the work forked before it out; the hook leaves none.
func TestRaceMadeVisible(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	r := newRuntime(t, "runc")

	late := e2e.NewBundle(t, e.rootfs, e2e.BundleOptions{Args: []string{"forker"}})
	if err := r.Run("late", late); err != nil {
		t.Fatal(err)
	}
	waitReady(t, late)
	lateGroup := "mon_groups/late-writer"
	if err := os.Mkdir(filepath.Join(e.sim.Dir, lateGroup), 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := r.State("late")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.sim.Dir, lateGroup, "tasks"), []byte(fmt.Sprint(st.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	lateMissing, lateTotal := e.outside(r, "late", lateGroup)

	hooked := e.bundle(crioPod(uidA, sandboxOf('a'), "app"))
	if err := r.Run("hooked", hooked); err != nil {
		t.Fatal(err)
	}
	waitReady(t, hooked)
	hookMissing, hookTotal := e.outside(r, "hooked", "mon_groups/"+uidA)

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
	e := newHookEnv(t, resctrlsim.Options{}, "retention: 1h\n")
	r := newRuntime(t, "runc")
	group := "mon_groups/" + uidA
	ann := crioPod(uidA, sandboxOf('a'), "app")
	args := []string{"sh", "-c", "sleep 600"}
	if err := r.Run("c1", e.bundle(ann, args...)); err != nil {
		t.Fatal(err)
	}
	rmid := e.rmid(group)
	if err := r.Delete("c1", true); err != nil {
		t.Fatal(err)
	}
	if !e.exists(group) {
		t.Fatalf("the group went with its container inside the retention window")
	}
	if err := r.Run("c1-again", e.bundle(ann, args...)); err != nil {
		t.Fatal(err)
	}
	if got := e.rmid(group); got != rmid {
		t.Errorf("restart inside the window: RMID %d, want %d", got, rmid)
	}
	if err := r.Delete("c1-again", true); err != nil {
		t.Fatal(err)
	}
	e.config("retention: 1s\n")
	time.Sleep(1100 * time.Millisecond) // the window has to pass; nothing is measured
	if err := r.Run("c1-late", e.bundle(ann, args...)); err != nil {
		t.Fatal(err)
	}
	if got := e.rmid(group); got == rmid {
		t.Errorf("restart after the window kept RMID %d", got)
	}
	// Each life has its own snapshots: the first one's pair, the second one's .begin.
	lives := lifeSnapshots(t, e.snapDir, uidA)
	if len(lives) != 3 || lives[1].Kind != snapshot.End || !lives[0].Life.Equal(lives[1].Life) || !lives[2].Life.After(lives[1].Life) {
		t.Fatalf("snapshots %v, want the first life's .begin and .end and the second life's .begin", lives)
	}
	if _, err := snapshot.ReadFile(filepath.Join(e.snapDir, lives[1].String())); err != nil {
		t.Errorf("the first life's end snapshot: %v", err)
	}
}

// lifeSnapshots lists group's snapshot files, by life.
func lifeSnapshots(t *testing.T, dir, group string) []snapshot.Name {
	t.Helper()
	all, err := snapshot.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(all, func(n snapshot.Name) bool { return n.Group != group })
}

// TestExhaustion: with RMIDs used up, containers still start (fail-open), the failure is
// logged with the kernel's words and the pod recorded as pending; fail-closed refuses the
// container with a message that says why.
func TestExhaustion(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, resctrlsim.Options{NumRMIDs: 2}, "")
	r := newRuntime(t, "runc")
	args := []string{"sh", "-c", "sleep 600"}
	if err := r.Run("a", e.bundle(crioPod(uidA, sandboxOf('a'), "app"), args...)); err != nil {
		t.Fatal(err)
	}
	if err := r.Run("b", e.bundle(crioPod(uidB, sandboxOf('b'), "app"), args...)); err != nil {
		t.Fatalf("fail-open: the container did not start: %v", err)
	}
	if n := e.logLines("container=b", "outcome=pending", "Out of RMIDs"); n != 1 {
		t.Errorf("the log does not say pod B is pending for want of RMIDs:\n%s", e.log())
	}
	if rec := e.readRecordFile(uidB); rec["pending"] == nil {
		t.Errorf("pod B is not recorded as pending: %v", rec)
	}
	e.config("failurePolicy: closed\n")
	err := r.Run("c", e.bundle(crioPod(uidC, sandboxOf('c'), "app"), args...))
	if err == nil || !strings.Contains(err.Error(), "no free RMID") {
		t.Errorf("fail-closed: %v", err)
	}
}

// TestManyContainers: fifty containers of five pods started in parallel make exactly five
// groups with every task placed; removing them all leaves no group and no registry entry.
func TestManyContainers(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, resctrlsim.Options{}, "retention: 0s\n")
	r := newRuntime(t, "runc")
	uids := []string{uidA, uidB, uidC, "6a1f3c2e-0000-4000-8000-00000000000d", "6a1f3c2e-0000-4000-8000-00000000000e"}
	const n = 50
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			b := e.bundle(crioPod(uids[i%5], sandboxOf("abcde"[i%5]), "c"), "sh", "-c", "sleep 600 & sleep 600 & wait")
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
	es, _ := os.ReadDir(filepath.Join(e.sim.Dir, "mon_groups"))
	if len(es) != 5 {
		t.Errorf("%d groups, want 5", len(es))
	}
	for i := range n {
		id := fmt.Sprintf("m%02d", i)
		err := poll.Until(10*time.Second, func() error {
			if missing, total := e.outside(r, id, "mon_groups/"+uids[i%5]); missing != 0 || total < 3 {
				return fmt.Errorf("%s: %d of %d tasks outside the group; the hook said:\n%s\nsimulator: %+v",
					id, missing, total, e.logFor(id), e.sim.Status().Stats)
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
	es, _ = os.ReadDir(filepath.Join(e.sim.Dir, "mon_groups"))
	if len(es) != 0 || len(e.records()) != 0 {
		t.Errorf("after removing every container: %d groups, %d registry entries\n%s", len(es), len(e.records()), e.log())
	}
}
