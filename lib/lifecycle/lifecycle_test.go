package lifecycle

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

const (
	podA = "0f8b2c1e-1111-2222-3333-444455556666"
	podB = "11111111-2222-3333-4444-555555555555"
)

var (
	sbA = strings.Repeat("a", 64)
	sbB = strings.Repeat("b", 64)
)

// env is a test's Manager on one resctrl: the simulator (sim), or the in-memory fake (fake,
// reached through rs: the fake or a wrapper of it). See backends_test.go.
type env struct {
	t    *testing.T
	sim  *resctrlsim.Sim
	fake *resctrlfake.Resctrl
	rs   resctrlfs.Groups
	cfg  config.Config
	m    *Manager
	now  time.Time
	// cgproc is the /proc the fake's Manager reads cgroups from (nil on the simulator,
	// whose Manager reads the host's): see inMemory.
	cgproc *proctest.FakeProc

	mu   sync.Mutex
	pids []int // the processes proc started
}

// proc starts a process standing in for a container's init.
func (e *env) proc() int {
	e.t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if e.cgproc != nil {
		e.cgproc.Inherit(e.t, cmd.Process.Pid)
	}
	e.mu.Lock()
	e.pids = append(e.pids, cmd.Process.Pid)
	e.mu.Unlock()
	return cmd.Process.Pid
}

// placed starts a stand-in init and places it as container id of the pod the annotations
// name, failing the test if that fails; it returns the init's pid.
func (e *env) placed(id string, a map[string]string) int {
	e.t.Helper()
	p := e.proc()
	if _, err := e.create(id, p, a); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func crio(pod, sandbox string) map[string]string {
	return map[string]string{identity.CRIOPodUID: pod, identity.CRIOSandboxID: sandbox, identity.CRIOContainerType: "container",
		identity.CRIOPodNamespace: "default", identity.CRIOPodName: "web"}
}

// create places a container as the hook does: identity from the runtime's annotations.
func (e *env) create(id string, pid int, a map[string]string) (Outcome, error) {
	return e.place(id, pid, a, "")
}

func (e *env) place(id string, pid int, a map[string]string, class string) (Outcome, error) {
	idn, err := identity.FromAnnotations(id, a)
	if err != nil {
		return Outcome{Container: id}, e.m.Refuse(id, err)
	}
	return e.m.Place(Placement{ContainerID: id, Pid: pid, Pod: idn, Annotations: a, Class: class})
}

func (e *env) stop(id string, a map[string]string) Outcome {
	e.t.Helper()
	idn, _ := identity.FromAnnotations(id, a)
	out, err := e.m.Leave(Departure{ContainerID: id, Pod: idn, Annotations: a})
	if err != nil {
		e.t.Fatalf("stop %s: %v", id, err)
	}
	return out
}

func TestPodLifetime(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, withConfig(func(c *config.Config) { c.Retention = 0 }))
		p1, p2 := e.proc(), e.proc()
		out, err := e.create("c1", p1, crio(strings.ToUpper(strings.ReplaceAll(podA, "-", "")), sbA))
		if err != nil || out.Action != "created" {
			t.Fatalf("first container: %+v, %v", out, err)
		}
		group := "mon_groups/" + podA // the canonical form, whatever the runtime sent
		if out.Group != group {
			t.Errorf("group %s, want %s", out.Group, group)
		}
		if out, err := e.create("c2", p2, crio(podA, sbA)); err != nil || out.Action != "joined" {
			t.Fatalf("second container: %+v, %v", out, err)
		}
		if got := e.tasks(group); !slices.Contains(got, p1) || !slices.Contains(got, p2) {
			t.Errorf("group tasks %v, want %d and %d", got, p1, p2)
		}
		rmid := e.rmid(group)
		if o := e.stop("c1", crio(podA, sbA)); o.Action != "left" || !e.exists(group) {
			t.Errorf("after one of two containers stopped: %+v, group exists %v", o, e.exists(group))
		}
		if e.rmid(group) != rmid {
			t.Errorf("the pod's RMID changed while it lived")
		}
		// A counter with no value is recorded as such, never as zero.
		e.setCounterState("mbm_local_bytes", "Unavailable", group)
		// The last container goes; its process must be gone too before the group can go.
		crash(t, p1, p2)
		if o := e.stop("c2", crio(podA, sbA)); o.Action != "removed" || e.exists(group) {
			t.Errorf("after the last container: %+v, group exists %v", o, e.exists(group))
		}
		lives := lifeSnapshots(t, e.cfg.SnapshotDir, podA)
		if len(lives) != 2 || lives[0].Kind != snapshot.Begin || lives[1].Kind != snapshot.End || !lives[0].Life.Equal(lives[1].Life) {
			t.Fatalf("snapshots %v, want one life's .begin and .end", lives)
		}
		for _, n := range lives {
			kind := string(n.Kind)
			s, err := snapshot.ReadFile(filepath.Join(e.cfg.SnapshotDir, n.String()))
			if err != nil {
				t.Fatalf("%s snapshot: %v", kind, err)
			}
			if s.Pod == nil || s.Pod.UID != podA || s.Path != group || len(s.Readings) == 0 {
				t.Errorf("%s snapshot: %+v", kind, s)
			}
			if kind == "end" && !slices.Equal(s.Unavailable, []string{"mon_L3_00/mbm_local_bytes"}) {
				t.Errorf("end snapshot: unavailable %v", s.Unavailable)
			}
		}
		if recs, _ := e.m.Store().List(); len(recs) != 0 {
			t.Errorf("registry entries left: %+v", recs)
		}
	})
}

// crash kills processes standing for containers' inits (SIGKILL, as a crash or runc kill
// would) and waits until each has exited, so that lifecycle sees them dead.
func crash(t *testing.T, pids ...int) {
	t.Helper()
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range pids {
		for !procfs.Finished(p) {
			if time.Now().After(deadline) {
				t.Fatalf("pid %d did not exit", p)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// A restart within the retention window keeps the pod's group and RMID; after it the group
// is removed by a later sweep and a new one (another RMID) is made.
func TestRetention(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, withConfig(func(c *config.Config) { c.Retention = config.Duration(time.Minute) }))
		group := "mon_groups/" + podA
		p := e.placed("c1", crio(podA, sbA))
		rmid := e.rmid(group)
		crash(t, p)
		if o := e.stop("c1", crio(podA, sbA)); o.Action != "idle" {
			t.Fatalf("stop: %+v", o)
		}
		e.now = e.now.Add(30 * time.Second)
		if removed, err := e.m.Sweep(); err != nil || len(removed) != 0 {
			t.Fatalf("sweep inside the window removed %v, %v", removed, err)
		}
		p = e.proc()
		if _, err := e.create("c1-restarted", p, crio(podA, sbA)); err != nil {
			t.Fatal(err)
		}
		if e.rmid(group) != rmid {
			t.Errorf("restart inside the window: RMID %d, want %d", e.rmid(group), rmid)
		}
		crash(t, p)
		e.stop("c1-restarted", crio(podA, sbA))
		e.now = e.now.Add(2 * time.Minute)
		// A restart after the window, before any sweep, gets a fresh group.
		if out, err := e.create("c1-late", e.proc(), crio(podA, sbA)); err != nil || out.Action != "created" {
			t.Fatalf("restart after the window: %+v, %v", out, err)
		}
		if got := e.rmid(group); got == rmid || got < 1 {
			t.Errorf("after the window: RMID %d, want a new one (not %d)", got, rmid)
		}
		// Two lives of one group, each with its own snapshots: the first one's pair, the second
		// one's .begin.
		lives := lifeSnapshots(t, e.cfg.SnapshotDir, podA)
		if len(lives) != 3 || lives[0].Kind != snapshot.Begin || lives[1].Kind != snapshot.End || lives[2].Kind != snapshot.Begin ||
			!lives[0].Life.Equal(lives[1].Life) || !lives[2].Life.After(lives[1].Life) {
			t.Errorf("snapshots %v, want the expired life's .begin and .end and the new life's .begin", lives)
		}
	})
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

// Sweep removes groups idle past the window, and only those.
func TestSweep(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, withConfig(func(c *config.Config) { c.Retention = config.Duration(time.Minute) }))
		for _, pod := range []string{podA, podB} {
			p := e.placed("c-"+pod, crio(pod, sbA))
			crash(t, p)
		}
		e.stop("c-"+podA, crio(podA, sbA))
		e.now = e.now.Add(2 * time.Minute)
		if removed, err := e.m.Sweep(); err != nil || !slices.Equal(removed, []string{"mon_groups/" + podA}) {
			t.Fatalf("sweep: %v, %v", removed, err)
		}
		if !e.exists("mon_groups/" + podB) {
			t.Errorf("a group with a container was swept")
		}
	})
}

func TestOutOfRMIDsIsPending(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, simOpts(resctrlsim.Options{NumRMIDs: 2}))
		if _, err := e.create("a1", e.proc(), crio(podA, sbA)); err != nil {
			t.Fatal(err)
		}
		out, err := e.create("b1", e.proc(), crio(podB, sbB))
		if !errors.Is(err, resctrlfs.ErrNoRMID) || out.Action != "pending" || !strings.Contains(err.Error(), "Out of RMIDs") {
			t.Fatalf("out of RMIDs: %+v, %v", out, err)
		}
		rec, ok, err := e.m.Store().Load(podB)
		if err != nil || !ok || rec.Pending == "" || len(rec.Containers) != 1 {
			t.Errorf("pending record: %+v, %v, %v", rec, ok, err)
		}
		fails, _ := e.m.Store().Failures(time.Time{})
		if len(fails) == 0 || fails[len(fails)-1].Reason != "create" {
			t.Errorf("failure not recorded: %+v", fails)
		}
	})
}

// Groups resctrl-mon did not make survive, and block nothing but their own name.
func TestForeignGroupsAreNotOurs(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, withConfig(func(c *config.Config) { c.Retention = 0 }))
		for _, g := range []string{"mon_groups/" + podA, "mon_groups/c1"} { // another tool's, runc's per-container
			e.mkdir(g)
		}
		if _, err := e.create("c1", e.proc(), crio(podA, sbA)); !errors.Is(err, ErrForeign) {
			t.Errorf("a pod whose name is taken by a foreign group: %v", err)
		}
		if _, err := e.create("c2", e.proc(), nil); err != nil { // plain: ctr-c2, never c2
			t.Fatal(err)
		}
		e.stop("c1", crio(podA, sbA))
		if !e.exists("mon_groups/"+podA) || !e.exists("mon_groups/c1") {
			t.Errorf("a foreign group was removed")
		}
		if removed, err := e.m.Sweep(); err != nil || len(removed) != 0 {
			t.Errorf("sweep touched %v, %v", removed, err)
		}
	})
}

func TestSpoofedPodIsRefused(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t)
		if _, err := e.create("c1", e.proc(), crio(podA, sbA)); err != nil {
			t.Fatal(err)
		}
		intruder := e.proc()
		if _, err := e.create("evil", intruder, crio(podA, sbB)); !errors.Is(err, ErrSpoofed) {
			t.Errorf("a container claiming pod A from another sandbox: %v", err)
		}
		if slices.Contains(e.tasks("mon_groups/"+podA), intruder) {
			t.Errorf("the intruder is in pod A's group")
		}
		bad := crio(podA, sbA)
		bad[identity.CRIOLabels] = `{"io.kubernetes.pod.uid":"` + podB + `"}`
		if _, err := e.create("evil2", e.proc(), bad); !errors.Is(err, ErrSpoofed) {
			t.Errorf("labels disagreeing with the annotation: %v", err)
		}
		// The sandbox ends (its poststop) and kubelet makes a new one under the same UID.
		sandbox := crio(podA, sbA)
		sandbox[identity.CRIOContainerType] = "sandbox"
		if _, err := e.create(sbA, e.proc(), sandbox); err != nil {
			t.Fatal(err)
		}
		e.stop(sbA, sandbox)
		if _, err := e.create("c3", e.proc(), crio(podA, sbB)); err != nil {
			t.Errorf("a container of the pod's new sandbox: %v", err)
		}
	})
}

// A pod's group goes under the allocation class its container runs in; a pod cannot span
// classes.
func TestAllocationClass(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t)
		e.mkClass("gold")
		p := e.proc()
		// As runc does with linux.intelRdt.closID before createRuntime hooks run.
		e.intoClass("gold", p)
		out, err := e.place("c1", p, crio(podA, sbA), "gold")
		if err != nil || out.Group != "gold/mon_groups/"+podA {
			t.Fatalf("classed container: %+v, %v", out, err)
		}
		if !slices.Contains(e.tasks("gold/mon_groups/"+podA), p) {
			t.Errorf("not in the class's group")
		}
		if _, err := e.create("c2", e.proc(), crio(podA, sbA)); !errors.Is(err, resctrlfs.ErrClassMismatch) {
			t.Errorf("a container of the same pod in the root class: %v", err)
		}
	})
}

// runc puts only the init's leader in the class (one tasks write, one thread): the other
// threads of the init cannot join the class's group, and end at execve anyway. The leader is
// placed; the others are skipped, not an error.
func TestAllocationClassMultiThreadedInit(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t)
		e.mkClass("gold")
		p := threadedInit(t)
		e.intoClass("gold", p)
		out, err := e.place("c1", p, crio(podA, sbA), "gold")
		// Threads the Go runtime made after the leader joined the class are in the class too
		// and move; those made before do not.
		if err != nil || out.Threads < 1 || !strings.Contains(out.Detail, "outside class gold") {
			t.Fatalf("multi-threaded init in a class: %+v, %v", out, err)
		}
		if got := e.tasks("gold/mon_groups/" + podA); !slices.Contains(got, p) {
			t.Errorf("the class's group holds %v, not the leader %d", got, p)
		}
	})
}

// Each kind of bad input is refused with its own error, and leaves no group.
func TestBadInput(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t)
		p := e.proc()
		for name, c := range map[string]struct {
			id   string
			pid  int
			a    map[string]string
			want error
			says string
		}{
			"no pid":      {"c1", 0, crio(podA, sbA), ErrBadInput, "no init pid"},
			"missing pid": {"c1", 1 << 30, crio(podA, sbA), ErrBadInput, "1073741824"},
			"bad uid":     {"c1", p, crio("not-a-uid", sbA), ErrSpoofed, "not a pod UID"},
			"traversal":   {"c1", p, map[string]string{identity.CRIOSandboxID: "../../" + sbA[6:]}, ErrSpoofed, "not 64 lowercase hex"},
			"two runtimes": {"c1", p, map[string]string{identity.CRIOSandboxID: sbA, identity.ContainerdSandboxID: sbA,
				identity.ContainerdPodUID: podA}, ErrSpoofed, "both containerd and CRI-O"},
		} {
			_, err := e.create(c.id, c.pid, c.a)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("%s: %v, want %v saying %q", name, err, c.want, c.says)
			}
		}
		if es := e.monGroups(); len(es) != 0 {
			t.Errorf("bad input left groups: %v", es)
		}
	})
}

func TestOptOutAndNamespaces(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, withConfig(func(c *config.Config) {
			c.Namespaces.Exclude = []string{"kube-system"}
			c.NoPod = config.NoPodSkip
		}))
		for name, a := range map[string]map[string]string{
			"opted out": func() map[string]string { a := crio(podA, sbA); a["resctrl-mon.io/disable"] = "true"; return a }(),
			"excluded":  func() map[string]string { a := crio(podA, sbA); a[identity.CRIOPodNamespace] = "kube-system"; return a }(),
			"no pod":    nil,
		} {
			if out, err := e.create("c1", e.proc(), a); err != nil || out.Action != "skipped" {
				t.Errorf("%s: %+v, %v", name, out, err)
			}
		}
	})
}

// Fifty containers of five pods at once: the per-pod lock makes exactly five groups.
func TestParallelContainers(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, withConfig(func(c *config.Config) { c.Retention = 0 }))
		pods := []string{podA, podB, "22222222-2222-3333-4444-555555555555", "33333333-2222-3333-4444-555555555555", "44444444-2222-3333-4444-555555555555"}
		var wg sync.WaitGroup
		pids := make([]int, 50)
		for i := range pids {
			pids[i] = e.proc()
		}
		errs := make(chan error, 50)
		for i := range 50 {
			wg.Go(func() {
				sb := strings.Repeat(strconv.Itoa(i%5), 64)
				_, err := e.create("c"+strconv.Itoa(i), pids[i], crio(pods[i%5], sb))
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		es := e.monGroups()
		if len(es) != 5 {
			t.Fatalf("%d groups, want 5", len(es))
		}
		for i, p := range pids {
			if !slices.Contains(e.tasks("mon_groups/"+pods[i%5]), p) {
				t.Errorf("container %d (pid %d) is not in its pod's group", i, p)
			}
		}
		crash(t, pids...)
		for i := range 50 {
			wg.Go(func() {
				sb := strings.Repeat(strconv.Itoa(i%5), 64)
				e.stop("c"+strconv.Itoa(i), crio(pods[i%5], sb))
			})
		}
		wg.Wait()
		es = e.monGroups()
		recs, _ := e.m.Store().List()
		if len(es) != 0 || len(recs) != 0 {
			t.Errorf("after all stopped: %d groups, %d records", len(es), len(recs))
		}
	})
}

// A sandbox's poststop means the pod is gone: its group goes at once, even inside the
// retention window and even if a container's own poststop never came.
func TestSandboxStopEndsThePod(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t) // retention 5m
		sandbox := crio(podA, sbA)
		sandbox[identity.CRIOContainerType] = "sandbox"
		ps, pc := e.proc(), e.proc()
		// The sandbox is never in the pod's group (nor in one of its own).
		if out, err := e.create(sbA, ps, sandbox); err != nil || out.Action != vocab.Skipped {
			t.Fatalf("sandbox: %+v, %v", out, err)
		}
		if _, err := e.create("app", pc, crio(podA, sbA)); err != nil {
			t.Fatal(err)
		}
		crash(t, ps, pc)
		if o := e.stop(sbA, sandbox); o.Action != "removed" || e.exists("mon_groups/"+podA) {
			t.Errorf("sandbox poststop: %+v", o)
		}
		if recs, _ := e.m.Store().List(); len(recs) != 0 {
			t.Errorf("records left: %+v", recs)
		}
	})
}

// A group re-made on a new RMID (resctrl lost it: a re-mount, a runtime's RDT setup) is a
// new life: its .begin does not overwrite the first one, whose counts belonged to the old RMID.
func TestRecreatedGroupIsANewLife(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t)
		if _, err := e.create("c1", e.proc(), crio(podA, sbA)); err != nil {
			t.Fatal(err)
		}
		e.remount()
		e.now = e.now.Add(time.Second)
		if out, err := e.create("c2", e.proc(), crio(podA, sbA)); err != nil || out.Action != vocab.Created {
			t.Fatalf("after the group vanished: %+v, %v", out, err)
		}
		names, err := snapshot.List(e.cfg.SnapshotDir)
		if err != nil {
			t.Fatal(err)
		}
		lives := map[time.Time]bool{}
		for _, n := range names {
			lives[n.Life] = true
		}
		rec, _, _ := e.m.Store().Load(podA)
		if len(names) != 2 || len(lives) != 2 || !lives[rec.Created] {
			t.Errorf("snapshots %+v; record's life %s", names, rec.Created)
		}
	})
}

// A .begin whose group vanished (no .end can be read for it) is a finished life: the
// housekeeping prunes it by age like any other; nothing else would ever remove it.
func TestBeginOfAVanishedGroupIsPruned(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, withConfig(func(c *config.Config) {
			c.Retention, c.SnapshotMaxAge = 0, config.Duration(time.Hour)
		}))
		p := e.placed("c1", crio(podA, sbA))
		crash(t, p)
		e.remount() // the group vanishes behind our back
		if o := e.stop("c1", crio(podA, sbA)); o.Action != vocab.Removed {
			t.Fatalf("stop: %+v", o)
		}
		if names, _ := snapshot.List(e.cfg.SnapshotDir); len(names) != 1 || names[0].Kind != snapshot.Begin {
			t.Fatalf("snapshots before pruning: %+v", names)
		}
		e.now = e.now.Add(2 * time.Hour)
		if _, err := e.m.Sweep(); err != nil {
			t.Fatal(err)
		}
		if names, _ := snapshot.List(e.cfg.SnapshotDir); len(names) != 0 {
			t.Errorf("the vanished group's .begin outlived snapshotMaxAge: %+v", names)
		}
	})
}

// threadedInit starts this test binary as a helper process with at least five threads (the
// Go runtime's and its own), waits until they exist, and returns its pid; it is killed when
// the test ends.
func threadedInit(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "LIFECYCLE_TEST_HELPER=threads")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p := cmd.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for tids, _ := procfs.Threads(p); len(tids) < 5; tids, _ = procfs.Threads(p) {
		if time.Now().After(deadline) {
			t.Fatalf("the helper has %d threads", len(tids))
		}
		time.Sleep(10 * time.Millisecond)
	}
	return p
}
