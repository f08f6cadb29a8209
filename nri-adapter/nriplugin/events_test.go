package nriplugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	nri "github.com/containerd/nri/pkg/adaptation"
	"github.com/containerd/nri/pkg/api"
	"github.com/sirupsen/logrus"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

func TestMain(m *testing.M) {
	// NRI's runtime side logs every connection at info through logrus.
	logrus.SetLevel(logrus.WarnLevel)
	// The runtime drops a plugin that takes longer than 2s over a request; race-built tests
	// sharing two cores with a FUSE simulator sometimes do. What an event costs is measured
	// by the benchmark, not by this timeout.
	nri.SetPluginRequestTimeout(20 * time.Second)
	code := m.Run()
	for _, b := range []*built{&forker, &adapterBin} {
		if b.path != "" {
			_ = os.RemoveAll(filepath.Dir(b.path))
		}
	}
	os.Exit(code)
}

// A pod's whole life through NRI: three forking containers placed at StartContainer (every
// task in the pod's group), a container stopped and re-created keeps the RMID, and the pod's
// removal writes .end and removes the group.
func TestPodLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.startAdapter(Options{})
	p := pod(uidA, sbA, "default", "web")
	e.rt.runPod(p)
	group := "mon_groups/" + uidA
	var inits []*proctest.Init
	var ctrs []*api.Container
	for i := range 3 {
		in := forkerInit(t)
		ctr := &api.Container{Id: "c" + string(rune('1'+i)), Name: "app"}
		if err := e.rt.start(p, ctr, uint32(in.Pid), in); err != nil {
			t.Fatal(err)
		}
		in.WaitLine(t, "ready")
		inits, ctrs = append(inits, in), append(ctrs, ctr)
	}
	e.placed(group, inits...)
	rmid := e.sim.RMID(group)
	if rmid < 0 {
		t.Fatalf("no group %s", group)
	}

	// The first container ends and is re-created: same group, same RMID.
	inits[0].Kill()
	e.rt.stopContainer(p, ctrs[0])
	e.rt.removeContainer(p, ctrs[0])
	again := forkerInit(t)
	if err := e.rt.start(p, &api.Container{Id: "c1-again", Name: "app"}, uint32(again.Pid), again); err != nil {
		t.Fatal(err)
	}
	again.WaitLine(t, "ready")
	e.placed(group, again)
	if got := e.sim.RMID(group); got != rmid {
		t.Errorf("RMID %d after the container was re-created, want %d", got, rmid)
	}

	// The pod goes: containers stop and are removed, then the sandbox.
	for i, in := range append(inits[1:], again) {
		in.Kill()
		c := append(ctrs[1:], &api.Container{Id: "c1-again"})[i]
		e.rt.stopContainer(p, c)
		e.rt.removeContainer(p, c)
	}
	e.rt.removePod(p)
	if e.exists(group) {
		t.Errorf("the group outlived its pod")
	}
	if got := e.snapshots(uidA); !slices.Equal(got, []snapshot.Kind{snapshot.Begin, snapshot.End}) {
		t.Errorf("snapshots %v, want .begin and .end", got)
	}
}

// With retention, the last container's departure keeps the group, so a container that
// kubelet re-creates keeps the RMID; the timer's sweep removes it once the window passed.
func TestRetentionAndSweepTimer(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		// Long enough for a loaded machine to start the next container within it (2 s was not,
		// once, under -race beside a profiled benchmark).
		e := newEnv(t, resctrlsim.Options{}, func(c *config.Config) { c.Retention = config.Duration(5 * time.Second) })
		e.startAdapter(Options{SweepEvery: 50 * time.Millisecond})
		p := pod(uidA, sbA, "default", "web")
		e.rt.runPod(p)
		group := "mon_groups/" + uidA
		in := proctest.Hold(t, "sleep 600")
		ctr := &api.Container{Id: "c1"}
		if err := e.rt.start(p, ctr, uint32(in.Pid), in); err != nil {
			t.Fatal(err)
		}
		rmid := e.rmid(group)
		in.Kill()
		e.rt.stopContainer(p, ctr)
		e.rt.removeContainer(p, ctr)
		in2 := proctest.Hold(t, "sleep 600")
		ctr2 := &api.Container{Id: "c2"}
		if err := e.rt.start(p, ctr2, uint32(in2.Pid), in2); err != nil {
			t.Fatal(err)
		}
		if got := e.rmid(group); got != rmid {
			t.Fatalf("RMID %d after a restart within the window, want %d", got, rmid)
		}
		in2.Kill()
		e.rt.stopContainer(p, ctr2)
		deadline := time.Now().Add(10 * time.Second)
		for e.exists(group) {
			if time.Now().After(deadline) {
				t.Fatalf("the timer's sweep did not remove the idle group")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// No pid at StartContainer (CRI-O before 1.36): the container is placed at
// PostStartContainer, every task of its cgroup, and the pod is marked late-assigned.
func TestPostStartFallback(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, resctrlsim.Options{}, nil)
		a := e.startAdapter(Options{})
		p := pod(uidA, sbA, "default", "web")
		e.rt.runPod(p)
		in := lateInit(t)
		ctr := &api.Container{Id: "c1"}
		// The pid comes only at PostStartContainer; the workload has forked by then.
		if err := e.rt.sendStart(p, ctr); err != nil {
			t.Fatal(err)
		}
		if e.exists("mon_groups/" + uidA) {
			t.Fatalf("a group was made without a pid")
		}
		in.Release(t)
		in.WaitLine(t, "ready")
		in.WaitTasks(t, lateTasks)
		ctr.Pid = uint32(in.Pid)
		if err := e.rt.sendPostStart(p, ctr); err != nil {
			t.Fatal(err)
		}
		e.placed("mon_groups/"+uidA, in)
		rec := e.record(uidA)
		if !rec.LateAssigned {
			t.Errorf("not marked late-assigned: %+v", rec)
		}
		// Placed on time, PostStartContainer does nothing more: the pod is not late.
		in2 := proctest.Hold(t, "sleep 600")
		p2 := pod(uidB, sbB, "default", "db")
		e.rt.runPod(p2)
		if err := e.rt.start(p2, &api.Container{Id: "c2"}, uint32(in2.Pid), in2); err != nil {
			t.Fatal(err)
		}
		if rec := e.record(uidB); rec.LateAssigned || len(rec.Containers) != 1 {
			t.Errorf("a container placed at StartContainer: %+v", rec)
		}
		if err := a.stop(); err != nil {
			t.Errorf("adapter stopped with %v", err)
		}
	})
}

// What NRI sends twice is done once: PostStartContainer after StartContainer placed the
// container, and RemoveContainer after StopContainer's departure, cost no registry work and
// count no outcome of their own; after a restart (nothing remembered) the registry answers.
func TestTwiceSentEventsDoneOnce(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, resctrlsim.Options{}, nil)
		a := e.startAdapter(Options{})
		p := pod(uidA, sbA, "default", "web")
		e.rt.runPod(p)
		ids := []string{"c1", "c2"}
		for _, id := range ids {
			in := proctest.Hold(t, "sleep 600")
			if err := e.rt.start(p, &api.Container{Id: id}, uint32(in.Pid), in); err != nil {
				t.Fatal(err)
			}
		}
		e.rt.stopContainer(p, &api.Container{Id: "c1"})
		e.rt.removeContainer(p, &api.Container{Id: "c1"})
		counts, err := e.manager().Store().Counts()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]uint64{"adapter.created": 1, "adapter.joined": 1, "adapter.left": 1}
		for name, n := range counts {
			if strings.HasPrefix(name, "adapter.") && n != want[name] {
				t.Errorf("%s counted %d, want %d (all: %v)", name, n, want[name], counts)
			}
		}
		// The adapter restarts between c2's stop and its removal: the removal goes to the
		// registry, which says the departure was made.
		e.rt.stopContainer(p, &api.Container{Id: "c2"})
		if err := a.stop(); err != nil {
			t.Fatal(err)
		}
		a = e.startAdapter(Options{})
		e.rt.removeContainer(p, &api.Container{Id: "c2"})
		if rec := e.record(uidA); len(rec.Containers) != 0 || rec.IdleSince == nil {
			t.Errorf("after both departures: %+v", rec)
		}
		if err := a.stop(); err != nil {
			t.Errorf("adapter stopped with %v", err)
		}
	})
}

// No pid at StartContainer, as CRI-O 1.34's NRI sends it, but the container's cgroupsPath:
// the created init is alone in that cgroup, found there and placed before it runs, not late.
func TestNoPidInitFromItsCgroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	a := e.startAdapter(Options{})
	p := pod(uidA, sbA, "default", "web")
	e.rt.runPod(p)
	in := lateInit(t) // held: it forks only once released
	ctr := &api.Container{Id: "c1",
		// proctest's cgroups are in the v1 pids hierarchy: the path below its root.
		Linux: &api.LinuxContainer{CgroupsPath: strings.TrimPrefix(in.Cgroup, "/sys/fs/cgroup/pids")}}
	if err := e.rt.sendStart(p, ctr); err != nil {
		t.Fatal(err)
	}
	if !e.exists("mon_groups/" + uidA) {
		t.Fatalf("no group at StartContainer for an init alone in its cgroup")
	}
	in.Release(t)
	in.WaitLine(t, "ready")
	in.WaitTasks(t, lateTasks)
	if err := e.rt.sendPostStart(p, ctr); err != nil {
		t.Fatal(err)
	}
	// Only the init's threads were moved, at StartContainer: its children are in the group
	// because they were born there.
	e.placed("mon_groups/"+uidA, in)
	if rec := e.record(uidA); rec.LateAssigned || len(rec.Containers) != 1 {
		t.Errorf("a pid-less container found by its cgroup: %+v, want placed on time", rec)
	}
	if err := a.stop(); err != nil {
		t.Errorf("adapter stopped with %v", err)
	}
}

// lateInit holds an init whose workload forks two children and a grandchild (4 tasks) and
// then stays still: placed after it ran (late), the test can tell every task was moved. (The
// forker's Go runtime may start a thread at any time, which a late placement races by
// nature.) Wait for lateTasks before placing it.
func lateInit(t *testing.T) *proctest.Init {
	t.Helper()
	return proctest.Hold(t, `sh -c 'sleep 600 & sh -c "sleep 600 & wait" & echo ready; wait'`)
}

const lateTasks = 4

// placeAsHook places a container as the OCI hook does on the same node: its pod from the
// spec's annotations, its init's pid.
func (e *env) placeAsHook(id string, pid int, ann map[string]string) lifecycle.Outcome {
	e.t.Helper()
	idn, err := identity.FromAnnotations(id, ann)
	if err != nil {
		e.t.Fatal(err)
	}
	out, err := e.manager().Place(lifecycle.Placement{ContainerID: id, Pid: pid, Pod: idn, Annotations: ann})
	if err != nil {
		e.t.Fatalf("hook: %v", err)
	}
	return out
}

func (e *env) record(group string) lifecycleRecord {
	e.t.Helper()
	rec, ok, err := e.manager().Store().Load(group)
	if err != nil || !ok {
		e.t.Fatalf("record of %s: %v, %v", group, ok, err)
	}
	return rec
}

// The adapter goes down while pods run; meanwhile one pod is removed and another started.
// On its restart, Synchronize removes the gone pod's group (with .end), places the new pod
// (late-assigned), and leaves the others as they were.
func TestRestartAndMissedEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	a := e.startAdapter(Options{})
	pa, pb := pod(uidA, sbA, "default", "gone"), pod(uidB, sbB, "default", "stays")
	e.rt.runPod(pa)
	e.rt.runPod(pb)
	inA, inB := proctest.Hold(t, "sleep 600"), forkerInit(t)
	ctrA, ctrB := &api.Container{Id: "ca"}, &api.Container{Id: "cb"}
	if err := e.rt.start(pa, ctrA, uint32(inA.Pid), inA); err != nil {
		t.Fatal(err)
	}
	if err := e.rt.start(pb, ctrB, uint32(inB.Pid), inB); err != nil {
		t.Fatal(err)
	}
	inB.WaitLine(t, "ready")
	rmidB := e.sim.RMID("mon_groups/" + uidB)
	if err := a.stop(); err != nil {
		t.Fatalf("adapter: %v", err)
	}

	// Missed: pod A ends, pod C starts.
	inA.Kill()
	e.rt.stopContainer(pa, ctrA)
	e.rt.removeContainer(pa, ctrA)
	e.rt.removePod(pa)
	uidC := "22222222-3333-4444-5555-666666666666"
	pc := pod(uidC, strings.Repeat("c", 64), "default", "new")
	e.rt.runPod(pc)
	inC := lateInit(t)
	if err := e.rt.start(pc, &api.Container{Id: "cc"}, uint32(inC.Pid), inC); err != nil {
		t.Fatal(err)
	}
	inC.WaitLine(t, "ready")
	inC.WaitTasks(t, lateTasks)
	if !e.exists("mon_groups/"+uidA) || e.exists("mon_groups/"+uidC) {
		t.Fatalf("events reached a stopped adapter")
	}

	e.startAdapter(Options{})
	if e.exists("mon_groups/" + uidA) {
		t.Errorf("the group of the pod removed meanwhile is still there")
	}
	if got := e.snapshots(uidA); !slices.Equal(got, []snapshot.Kind{snapshot.Begin, snapshot.End}) {
		t.Errorf("snapshots of the removed pod %v, want .begin and .end", got)
	}
	e.placed("mon_groups/"+uidC, inC)
	if rec := e.record(uidC); !rec.LateAssigned {
		t.Errorf("the pod started meanwhile is not marked late-assigned: %+v", rec)
	}
	e.placed("mon_groups/"+uidB, inB)
	if got := e.sim.RMID("mon_groups/" + uidB); got != rmidB {
		t.Errorf("the pod that ran on has RMID %d, had %d", got, rmidB)
	}
	if rec := e.record(uidB); rec.LateAssigned {
		t.Errorf("the pod that ran on was marked late-assigned")
	}
}

// The runtime goes away (its process dies: the connection drops): the adapter's Run ends
// with ErrRuntimeGone, and the binary exits 1 for its supervisor to restart it.
func TestRuntimeGone(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, resctrlsim.Options{}, nil)
		sock, drop := proxy(t, e.rt.sock)
		p, err := e.newPlugin(e.cfg, discard())
		if err != nil {
			t.Fatal(err)
		}
		a := e.runSynced(p, Options{Socket: sock})
		drop()
		select {
		case <-a.ended:
			if !errors.Is(a.err, ErrRuntimeGone) {
				t.Errorf("Run returned %v, want ErrRuntimeGone", a.err)
			}
		case <-time.After(syncDeadline):
			t.Fatal("the adapter did not notice the runtime went")
		}
	})
}

// proxy relays a unix socket to target; drop closes every relayed connection, as the death
// of the runtime's process would (stopping NRI's runtime side leaves external plugins'
// connections open).
func proxy(t *testing.T, target string) (sock string, drop func()) {
	t.Helper()
	sock = target + ".proxy"
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("unix", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, up)
			mu.Unlock()
			go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
			go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
		}
	}()
	drop = func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	}
	t.Cleanup(drop)
	return sock, drop
}

// A bad configuration refuses to start, saying which key; one pushed by the runtime fails
// the registration and leaves the adapter's own in place.
func TestBadConfig(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, resctrlsim.Options{}, nil)
		bad := e.cfg
		bad.PodSelector = "app in (web)"
		if _, err := e.newPlugin(bad, discard()); err == nil || !strings.Contains(err.Error(), "podSelector") {
			t.Errorf("New with a bad podSelector: %v", err)
		}
		p, err := e.newPlugin(e.cfg, discard())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Configure(context.Background(), "retention: -1m\n", "containerd", "v2.4.2"); err == nil || !strings.Contains(err.Error(), "retention") {
			t.Errorf("Configure with a bad config: %v", err)
		}
		if _, err := p.Configure(context.Background(), "no such key: 1\n", "containerd", "v2.4.2"); err == nil {
			t.Errorf("Configure with an unknown key succeeded")
		}
		if cfg, _, _ := p.current(); cfg.Retention != e.cfg.Retention {
			t.Errorf("a refused config was applied")
		}
		good := "resctrlRoot: " + e.cfg.ResctrlRoot + "\nresctrlSimulator: true\nstateDir: " + e.cfg.StateDir + "\nretention: 2m\nnamespaces: {exclude: [kube-system]}\n"
		if _, err := p.Configure(context.Background(), good, "containerd", "v2.4.2"); err != nil {
			t.Fatal(err)
		}
		if cfg, _, _ := p.current(); time.Duration(cfg.Retention) != 2*time.Minute || !slices.Equal(cfg.Namespaces.Exclude, []string{"kube-system"}) {
			t.Errorf("pushed config not applied: %+v", cfg)
		}
	})
}

// Filters: an excluded namespace, an opt-out annotation on the pod, and a pod the label
// selector leaves out get no group; a pod that does not add up is refused and, under the
// fail-closed policy, not started.
func TestFiltersAndRefusals(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, resctrlsim.Options{}, func(c *config.Config) {
			c.Namespaces.Exclude = []string{"kube-system"}
			c.PodSelector = "app!=skipme"
			c.FailurePolicy = config.FailClosed
		})
		e.startAdapter(Options{})
		for name, p := range map[string]*api.PodSandbox{
			"excluded namespace": pod(uidA, sbA, "kube-system", "dns"),
			"opted out": {Id: sbB, Uid: uidB, Namespace: "default", Name: "quiet",
				Annotations: map[string]string{"resctrl-mon.io/disable": "true"}},
			"not selected": pod("33333333-3333-4333-8333-333333333333", strings.Repeat("d", 64), "default", "skipme"),
		} {
			e.rt.runPod(p)
			in := proctest.Hold(t, "sleep 600")
			if err := e.rt.start(p, &api.Container{Id: "c-" + p.Name}, uint32(in.Pid), in); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			if g := "mon_groups/" + identityUID(p); e.exists(g) {
				t.Errorf("%s: group %s made", name, g)
			}
		}
		bad := &api.PodSandbox{Id: strings.Repeat("e", 64), Uid: "not-a-uid", Namespace: "default", Name: "bad"}
		e.rt.runPod(bad)
		in := proctest.Hold(t, "sleep 600")
		if err := e.rt.start(bad, &api.Container{Id: "c-bad"}, uint32(in.Pid), in); err == nil || !strings.Contains(err.Error(), "not started") {
			t.Errorf("a pod with a bad UID under failurePolicy closed: %v", err)
		}
	})
}

func identityUID(p *api.PodSandbox) string {
	idn, err := identity.FromPodSandbox(identity.PodSandbox{ID: p.Id, UID: p.Uid})
	if err != nil {
		return p.Uid
	}
	return idn.PodUID
}

// The hook (at createRuntime) and the adapter (at StartContainer) both place a container on
// one node, one state dir: it is placed once, one record, one RMID, one .begin.
func TestHookAndAdapterPlaceOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.startAdapter(Options{})
	p := pod(uidA, sbA, "default", "web")
	e.rt.runPod(p)
	in := forkerInit(t)
	// The hook's view: containerd's annotations on the OCI spec.
	ann := map[string]string{identity.ContainerdPodUID: uidA, identity.ContainerdSandboxID: sbA, identity.ContainerdContainerType: "container",
		identity.ContainerdPodNamespace: "default", identity.ContainerdPodName: "web"}
	if out := e.placeAsHook("c1", in.Pid, ann); out.Action != vocab.Created {
		t.Fatalf("hook: %+v", out)
	}
	rmid := e.sim.RMID("mon_groups/" + uidA)
	if err := e.rt.start(p, &api.Container{Id: "c1"}, uint32(in.Pid), in); err != nil {
		t.Fatal(err)
	}
	in.WaitLine(t, "ready")
	e.placed("mon_groups/"+uidA, in)
	if rec := e.record(uidA); len(rec.Containers) != 1 || len(rec.Inits) != 1 {
		t.Errorf("record %+v: want one container", rec)
	}
	if got := e.sim.RMID("mon_groups/" + uidA); got != rmid {
		t.Errorf("RMID %d, want %d", got, rmid)
	}
	if got := e.snapshots(uidA); len(got) != 1 {
		t.Errorf("snapshots %v, want one .begin", got)
	}
	// A Synchronize now (an adapter restart) changes nothing.
	e.startAdapter(Options{})
	if rec := e.record(uidA); len(rec.Containers) != 1 || rec.LateAssigned {
		t.Errorf("after Synchronize: %+v", rec)
	}
}

// A pre-registered plugin: the runtime starts the adapter from its plugin directory, with
// no arguments and no environment (here there is no /etc/resctrl-mon/config.yaml and no
// resctrl at /sys/fs/resctrl), and pushes the configuration in its plugin config
// directory: that is enough, and the adapter places the pod's container.
func TestPreRegistered(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	bin := adapterBin.get(t, "../../nri-adapter/resctrl-mon-nri")
	logPath := filepath.Join(t.TempDir(), "nri.log")
	conf := fmt.Sprintf("resctrlRoot: %s\nresctrlSimulator: true\nstateDir: %s\nsnapshotDir: %s\nretention: 0s\nlog: file:%s\n",
		e.cfg.ResctrlRoot, e.cfg.StateDir, e.cfg.SnapshotDir, logPath)
	rt := newRuntimeWith(t, func(pluginDir, confDir string) {
		// A link, not a copy: a file this process wrote can be held open by a child
		// another test forks meanwhile, and then fails to exec (ETXTBSY).
		if err := os.Symlink(bin, filepath.Join(pluginDir, "90-resctrl-mon")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(confDir, "90-resctrl-mon.conf"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	p := pod(uidA, sbA, "default", "web")
	rt.runPod(p)
	in := forkerInit(t)
	if err := rt.start(p, &api.Container{Id: "c1"}, uint32(in.Pid), in); err != nil {
		t.Fatal(err)
	}
	in.WaitLine(t, "ready")
	log, _ := os.ReadFile(logPath)
	if !e.exists("mon_groups/" + uidA) {
		t.Fatalf("no group: the launched adapter did not place the container; its log:\n%s", log)
	}
	e.placed("mon_groups/"+uidA, in)
	if !strings.Contains(string(log), "pushed by the runtime") {
		t.Errorf("the adapter's log does not say the runtime's configuration was applied:\n%s", log)
	}
	in.Kill()
	rt.stopContainer(p, &api.Container{Id: "c1"})
	if e.exists("mon_groups/" + uidA) {
		t.Errorf("the group outlived the pod's only container (retention 0)")
	}
}

// An adapter without a usable configuration of its own, to which the runtime pushes none,
// fails its registration saying why.
func TestUnconfiguredRefusesToRegister(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, resctrlsim.Options{}, nil)
		why := errors.New("config key \"resctrlRoot\": not a resctrl mount")
		p := Unconfigured(discard(), why, kernel.Open)
		a := e.run(p, Options{})
		select {
		case <-a.ended:
			if a.err == nil || !strings.Contains(a.err.Error(), "resctrlRoot") {
				t.Errorf("Run returned %v, want the reason", a.err)
			}
		case <-time.After(syncDeadline):
			t.Fatal("an adapter without configuration registered")
		}
	})
}

// No free RMID: under failurePolicy open the container starts and its pod is recorded as
// pending, then completed (placed whole, late-assigned) at its next container start once an
// RMID is free; under closed the container does not start.
func TestRMIDExhaustion(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		for _, policy := range []config.FailurePolicy{config.FailOpen, config.FailClosed} {
			t.Run(string(policy), func(t *testing.T) {
				t.Parallel()
				// RMID 0 is the root's and the foreign group holds one: one pod fits.
				e := newEnv(t, resctrlsim.Options{NumRMIDs: 3}, func(c *config.Config) { c.FailurePolicy = policy })
				e.startAdapter(Options{})
				pa, pb := pod(uidA, sbA, "default", "first"), pod(uidB, sbB, "default", "second")
				e.rt.runPod(pa)
				e.rt.runPod(pb)
				inA := proctest.Hold(t, "sleep 600")
				ctrA := &api.Container{Id: "ca"}
				if err := e.rt.start(pa, ctrA, uint32(inA.Pid), inA); err != nil {
					t.Fatal(err)
				}
				inB := proctest.Hold(t, "sleep 600")
				err := e.rt.start(pb, &api.Container{Id: "cb"}, uint32(inB.Pid), inB)
				if policy == config.FailClosed {
					if err == nil || !strings.Contains(err.Error(), "no free RMID") {
						t.Fatalf("fail-closed start without an RMID: %v", err)
					}
					return
				}
				if err != nil {
					t.Fatalf("fail-open start without an RMID: %v", err)
				}
				if rec := e.record(uidB); rec.Pending == "" {
					t.Fatalf("the pod without an RMID is not pending: %+v", rec)
				}
				// The first pod ends; the second's next container gets the freed RMID, and the
				// first container, which ran outside, is moved in.
				inA.Kill()
				e.rt.stopContainer(pa, ctrA)
				e.rt.removeContainer(pa, ctrA)
				e.rt.removePod(pa)
				inB2 := proctest.Hold(t, "sleep 600")
				if err := e.rt.start(pb, &api.Container{Id: "cb2"}, uint32(inB2.Pid), inB2); err != nil {
					t.Fatal(err)
				}
				e.placed("mon_groups/"+uidB, inB, inB2)
				if rec := e.record(uidB); rec.Pending != "" || !rec.LateAssigned {
					t.Errorf("completed pod: %+v; want not pending, late-assigned", rec)
				}
			})
		}
	})
}

// Slow resctrl: the adapter answers within its budget (hookBudget, under the runtime's
// request timeout, past which the runtime would drop it and fail the container whatever the
// policy). Fail-open lets the container start while the placement goes on in the background
// and completes; fail-closed refuses the start.
func TestBudget(t *testing.T) {
	t.Parallel()
	for _, policy := range []config.FailurePolicy{config.FailOpen, config.FailClosed} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, func(c *config.Config) {
				c.FailurePolicy = policy
				c.HookBudget = config.Duration(300 * time.Millisecond)
			})
			e.startAdapter(Options{})
			e.sim.SetLatency(resctrlsim.OpMkdir, 3*time.Second)
			p := pod(uidA, sbA, "default", "web")
			e.rt.runPod(p)
			in := proctest.Hold(t, "sleep 600")
			start := time.Now()
			err := e.rt.start(p, &api.Container{Id: "c1"}, uint32(in.Pid), in)
			took := time.Since(start)
			e.sim.SetLatency(resctrlsim.OpMkdir, 0)
			if took > 2*time.Second {
				t.Errorf("the start waited %s for resctrl", took)
			}
			if policy == config.FailClosed {
				if err == nil || !strings.Contains(err.Error(), "time budget") {
					t.Errorf("fail-closed: %v, want the budget's error", err)
				}
			} else if err != nil {
				t.Errorf("fail-open: %v", err)
			}
			// The placement went on: the group appears with the init in it.
			group := "mon_groups/" + uidA
			if err := pollFor(10*time.Second, func() bool { return e.exists(group) && slices.Contains(e.tasks(group), in.Pid) }); err != nil {
				t.Errorf("the background placement did not complete: %v", err)
			}
		})
	}
}

// pollFor waits for cond, checking every 20ms, at most d.
func pollFor(d time.Duration, cond func() bool) error {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", d)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

func TestBudgetIsUnderTheRequestTimeout(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	for _, tc := range []struct {
		hookBudget, request, want time.Duration
	}{
		{8 * time.Second, 2 * time.Second, 1500 * time.Millisecond},
		{time.Second, 2 * time.Second, time.Second},
		{8 * time.Second, 20 * time.Second, 8 * time.Second},
		{time.Second, 300 * time.Millisecond, minBudget},
	} {
		cfg.HookBudget = config.Duration(tc.hookBudget)
		if got := eventBudget(cfg, tc.request); got != tc.want {
			t.Errorf("hookBudget %s, request timeout %s: budget %s, want %s", tc.hookBudget, tc.request, got, tc.want)
		}
	}
}

// One node, one state dir: a pod placed by the hook (CRI-O's annotations, as under CRI-O or
// podman) and one placed by the adapter. Status shows both; the adapter's Synchronize, which
// does not know the hook's pod (another runtime's), leaves it and its RMID alone.
func TestBesideHooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.startAdapter(Options{})
	// The hook's pod.
	hookInit := proctest.Hold(t, "sleep 600")
	ann := map[string]string{identity.CRIOPodUID: uidB, identity.CRIOSandboxID: sbB, identity.CRIOContainerType: "container",
		identity.CRIOPodNamespace: "crio", identity.CRIOPodName: "hooked", identity.CRIOContainerID: "hc1"}
	e.placeAsHook("hc1", hookInit.Pid, ann)
	hookInit.Release(t)
	rmidB := e.sim.RMID("mon_groups/" + uidB)
	// The adapter's pod.
	p := pod(uidA, sbA, "default", "nri")
	e.rt.runPod(p)
	in := proctest.Hold(t, "sleep 600")
	if err := e.rt.start(p, &api.Container{Id: "c1"}, uint32(in.Pid), in); err != nil {
		t.Fatal(err)
	}
	e.startAdapter(Options{}) // a second adapter: a Synchronize that knows only pod A

	inv, err := inventory.Open(e.cfg, resctrlfs.MountFor(e.cfg.ResctrlSimulator))
	if err != nil {
		t.Fatal(err)
	}
	pods, err := inv.Pods(inventory.Options{Tasks: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range pods {
		got[p.PodUID] = p.Namespace + "/" + p.PodName
	}
	if want := map[string]string{uidA: "default/nri", uidB: "crio/hooked"}; !maps.Equal(got, want) {
		t.Errorf("status shows %v, want %v", got, want)
	}
	if e.sim.RMID("mon_groups/"+uidB) != rmidB || !slices.Contains(e.tasks("mon_groups/"+uidB), hookInit.Pid) {
		t.Errorf("the adapter's Synchronize changed the hook's pod")
	}
}
