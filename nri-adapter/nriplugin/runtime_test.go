package nriplugin

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	nri "github.com/containerd/nri/pkg/adaptation"
	"github.com/containerd/nri/pkg/api"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
	"github.com/resctrl-mon/resctrl-mon/test/simenv"
)

// The runtime side of NRI (pkg/adaptation, what containerd and CRI-O link) in the test
// process, on a short socket path, driving the real adapter over the real stub: events are
// synchronous calls, so nothing waits but the adapter's registration, which has a deadline.

const syncDeadline = 20 * time.Second

// fakeRuntime keeps pods and containers as a runtime would, and relays their events.
type fakeRuntime struct {
	t      testing.TB
	sock   string
	r      *nri.Adaptation
	mu     sync.Mutex
	pods   map[string]*api.PodSandbox
	ctrs   map[string]*api.Container
	synced chan struct{}
}

func newRuntime(t *testing.T) *fakeRuntime { return newRuntimeTB(t) }

func newRuntimeTB(t testing.TB) *fakeRuntime { return newRuntimeWith(t, nil) }

// newRuntimeWith lets setup fill the runtime's plugin and plugin config directories before it
// starts (and launches what is there: pre-registered plugins).
func newRuntimeWith(t testing.TB, setup func(pluginDir, confDir string)) *fakeRuntime {
	t.Helper()
	// Not t.TempDir: a unix socket path must stay under 108 bytes.
	dir, err := os.MkdirTemp("", "nri-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	pluginDir, confDir := filepath.Join(dir, "plugins"), filepath.Join(dir, "conf.d")
	if setup != nil {
		for _, d := range []string{pluginDir, confDir} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		setup(pluginDir, confDir)
	}
	rt := &fakeRuntime{t: t, sock: filepath.Join(dir, "nri.sock"), pods: map[string]*api.PodSandbox{}, ctrs: map[string]*api.Container{},
		synced: make(chan struct{}, 16)}
	rt.r, err = nri.New("containerd", "v2.4.2", rt.sync, func(context.Context, []*nri.ContainerUpdate) ([]*nri.ContainerUpdate, error) { return nil, nil },
		nri.WithPluginPath(pluginDir), nri.WithPluginConfigPath(confDir), nri.WithSocketPath(rt.sock))
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.r.Start(); err != nil {
		t.Fatal(err)
	}
	<-rt.synced // the runtime's own start synchronises its pre-installed plugins
	t.Cleanup(rt.stop)
	return rt
}

func (rt *fakeRuntime) stop() {
	if rt.r != nil {
		rt.r.Stop()
		rt.r = nil
	}
}

// sync hands a connecting plugin the runtime's pods and containers, sorted, as containerd
// does, and says when the plugin has synchronised.
func (rt *fakeRuntime) sync(ctx context.Context, cb nri.SyncCB) error {
	rt.mu.Lock()
	pods := slices.Collect(mapsValues(rt.pods))
	ctrs := slices.Collect(mapsValues(rt.ctrs))
	rt.mu.Unlock()
	sort.Slice(pods, func(i, j int) bool { return pods[i].Id < pods[j].Id })
	sort.Slice(ctrs, func(i, j int) bool { return ctrs[i].Id < ctrs[j].Id })
	_, err := cb(ctx, pods, ctrs)
	rt.synced <- struct{}{}
	return err
}

func mapsValues[V any](m map[string]V) func(func(V) bool) {
	return func(yield func(V) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

// blocked runs an event with plugin registration held off, as containerd does: a plugin
// that synchronised is then registered before the event reaches anyone.
func (rt *fakeRuntime) blocked(f func(context.Context) error) error {
	b := rt.r.BlockPluginSync()
	defer b.Unblock()
	return f(context.Background())
}

func (rt *fakeRuntime) runPod(pod *api.PodSandbox) {
	rt.t.Helper()
	rt.mu.Lock()
	rt.pods[pod.Id] = pod
	rt.mu.Unlock()
	if err := rt.blocked(func(ctx context.Context) error { return rt.r.RunPodSandbox(ctx, &api.RunPodSandboxRequest{Pod: pod}) }); err != nil {
		rt.t.Fatal(err)
	}
}

// start sends StartContainer for a container whose init is held (pid may be 0: a runtime
// that does not give it), then PostStartContainer with pid once release has let it run.
func (rt *fakeRuntime) start(pod *api.PodSandbox, ctr *api.Container, pidAtStart uint32, in *proctest.Init) error {
	rt.t.Helper()
	ctr.PodSandboxId, ctr.State, ctr.Pid = pod.Id, api.ContainerState_CONTAINER_CREATED, pidAtStart
	rt.mu.Lock()
	rt.ctrs[ctr.Id] = ctr
	rt.mu.Unlock()
	if err := rt.sendStart(pod, ctr); err != nil {
		return err
	}
	in.Release(rt.t)
	ctr.Pid = uint32(in.Pid)
	return rt.sendPostStart(pod, ctr)
}

// sendStart sends StartContainer for ctr as it is (created: its init held).
func (rt *fakeRuntime) sendStart(pod *api.PodSandbox, ctr *api.Container) error {
	ctr.PodSandboxId, ctr.State = pod.Id, api.ContainerState_CONTAINER_CREATED
	return rt.blocked(func(ctx context.Context) error {
		return rt.r.StartContainer(ctx, &api.StartContainerRequest{Pod: pod, Container: ctr})
	})
}

// sendPostStart sends PostStartContainer for ctr as it is, now running.
func (rt *fakeRuntime) sendPostStart(pod *api.PodSandbox, ctr *api.Container) error {
	ctr.State = api.ContainerState_CONTAINER_RUNNING
	return rt.blocked(func(ctx context.Context) error {
		return rt.r.PostStartContainer(ctx, &api.PostStartContainerRequest{Pod: pod, Container: ctr})
	})
}

func (rt *fakeRuntime) stopContainer(pod *api.PodSandbox, ctr *api.Container) {
	rt.t.Helper()
	ctr.State = api.ContainerState_CONTAINER_STOPPED
	if err := rt.blocked(func(ctx context.Context) error {
		_, err := rt.r.StopContainer(ctx, &api.StopContainerRequest{Pod: pod, Container: ctr})
		return err
	}); err != nil {
		rt.t.Fatal(err)
	}
}

func (rt *fakeRuntime) removeContainer(pod *api.PodSandbox, ctr *api.Container) {
	rt.t.Helper()
	rt.mu.Lock()
	delete(rt.ctrs, ctr.Id)
	rt.mu.Unlock()
	if err := rt.blocked(func(ctx context.Context) error {
		return rt.r.RemoveContainer(ctx, &api.RemoveContainerRequest{Pod: pod, Container: ctr})
	}); err != nil {
		rt.t.Fatal(err)
	}
}

func (rt *fakeRuntime) removePod(pod *api.PodSandbox) {
	rt.t.Helper()
	rt.mu.Lock()
	delete(rt.pods, pod.Id)
	rt.mu.Unlock()
	if err := rt.blocked(func(ctx context.Context) error {
		return rt.r.RemovePodSandbox(ctx, &api.RemovePodSandboxRequest{Pod: pod})
	}); err != nil {
		rt.t.Fatal(err)
	}
}

// env is one test: its resctrl (the simulator, sim, or the in-memory fake, fake: see
// backends_test.go), a config, the runtime, and a foreign group named like a pod that
// nothing may touch.
type env struct {
	t       *testing.T
	sim     *resctrlsim.Sim
	fake    *resctrlfake.Resctrl
	rs      resctrlfs.Groups // what the adapter is given on the fake: fake, or fake with limbo
	cfg     config.Config
	rt      *fakeRuntime
	foreign string
}

const foreignUID = "99999999-8888-4777-8666-555555555555"

// newEnv is the test's env on the simulator with its default options.
func newEnv(t *testing.T, edit func(*config.Config)) *env {
	t.Helper()
	return newEnvSim(t, resctrlsim.Options{}, edit)
}

// newEnvSim is the test's env on the simulator mounted with simOpts (it skips without root
// or FUSE).
func newEnvSim(t *testing.T, simOpts resctrlsim.Options, edit func(*config.Config)) *env {
	t.Helper()
	simOpts.Debug = true
	se := simenv.New(t, simOpts)
	e := &env{t: t, sim: se.Sim, cfg: se.Config}
	e.setUp(edit)
	return e
}

// setUp edits the env's config (retention 0 unless the edit says otherwise), makes the
// foreign group, as another tool would, and starts the runtime; the test fails if the
// foreign group is gone at its end.
func (e *env) setUp(edit func(*config.Config)) {
	e.t.Helper()
	e.cfg.Retention = 0
	if edit != nil {
		edit(&e.cfg)
	}
	e.foreign = "mon_groups/" + foreignUID
	e.mkdir(e.foreign)
	e.rt = newRuntime(e.t)
	e.t.Cleanup(func() {
		if !e.exists(e.foreign) {
			e.t.Errorf("the foreign group %s was removed", e.foreign)
		}
	})
}

// adapter is a running adapter; stop ends it and returns what Run returned.
type adapter struct {
	p      *Plugin
	cancel context.CancelFunc
	// ended is closed when Run has returned, err then being what it returned.
	ended chan struct{}
	err   error
}

func (a *adapter) stop() error {
	a.cancel()
	<-a.ended
	return a.err
}

// startAdapter starts the adapter on the runtime's socket and waits until it has
// synchronised.
func (e *env) startAdapter(o Options) *adapter {
	e.t.Helper()
	return e.startAdapterLogging(o, testWriter{e.t})
}

// startAdapterLogging is startAdapter with the adapter's log written to w (a test that reads
// what the adapter said).
func (e *env) startAdapterLogging(o Options, w io.Writer) *adapter {
	e.t.Helper()
	p, err := e.newPlugin(e.cfg, slog.New(slog.NewTextHandler(w, nil)))
	if err != nil {
		e.t.Fatal(err)
	}
	return e.runSynced(p, o)
}

// runSynced runs p (on o.Socket, the runtime's when empty: a test puts a proxy between) until
// the test ends, and waits for the runtime's Synchronize of it.
func (e *env) runSynced(p *Plugin, o Options) *adapter {
	e.t.Helper()
	a := e.run(p, o)
	select {
	case <-e.rt.synced:
	case <-a.ended:
		e.t.Fatalf("the adapter stopped before it synchronised: %v", a.err)
	case <-time.After(syncDeadline):
		e.t.Fatalf("the adapter did not synchronise within %s", syncDeadline)
	}
	return a
}

// run runs p on o.Socket (the runtime's when empty) until the test ends: its cleanup waits
// for Run to return, so that nothing the adapter logs on its way out (to the test's log)
// comes after the test has ended.
func (e *env) run(p *Plugin, o Options) *adapter {
	if o.Socket == "" {
		o.Socket = e.rt.sock
	}
	if o.SweepEvery == 0 {
		o.SweepEvery = time.Hour
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &adapter{p: p, cancel: cancel, ended: make(chan struct{})}
	go func() {
		a.err = p.Run(ctx, o)
		close(a.ended)
	}()
	e.t.Cleanup(func() {
		a.cancel()
		select {
		case <-a.ended:
		case <-time.After(syncDeadline):
			e.t.Errorf("the adapter did not stop within %s of its context's end", syncDeadline)
		}
	})
	return a
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(b))
	return len(b), nil
}

// placed checks that every task of the containers' cgroups is in the group, and prints
// how many are.
func (e *env) placed(group string, inits ...*proctest.Init) {
	e.t.Helper()
	var all, missing []int
	for _, i := range inits {
		all = append(all, i.Tasks(e.t)...)
	}
	// Listing the root group makes the simulator take in the fork events it has queued, so
	// the threads just listed in the cgroups are known to it.
	_ = e.tasks("")
	in := e.tasks(group)
	for _, tid := range all {
		if !slices.Contains(in, tid) {
			missing = append(missing, tid)
		}
	}
	e.t.Logf("placed %d of %d tasks in %s", len(all)-len(missing), len(all), group)
	if len(missing) > 0 {
		e.t.Errorf("tasks %v are not in %s (it holds %v)", missing, group, in)
	}
}

func (e *env) snapshots(group string) []snapshot.Kind {
	e.t.Helper()
	all, err := snapshot.List(e.cfg.SnapshotDir)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []snapshot.Kind
	for _, n := range all {
		if n.Group == group {
			out = append(out, n.Kind)
		}
	}
	return out
}

func pod(uid, sandbox, ns, name string) *api.PodSandbox {
	return &api.PodSandbox{Id: sandbox, Uid: uid, Namespace: ns, Name: name, Labels: map[string]string{"app": name}}
}

// built is a binary the tests build once: the e2e forker, the adapter itself.
type built struct {
	once sync.Once
	path string
	err  error
}

func (b *built) get(t testing.TB, pkg string) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "nri-bin-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, filepath.Base(pkg))
		cmd := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", b.path, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

var forker, adapterBin built

// forkerInit holds a container init whose workload (test/e2e/forker) forks children, a
// grandchild and threads the moment it runs.
func forkerInit(t *testing.T) *proctest.Init {
	t.Helper()
	forker.get(t, "../../test/e2e/forker")
	return proctest.Hold(t, forker.path)
}

type lifecycleRecord = registry.Record

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
