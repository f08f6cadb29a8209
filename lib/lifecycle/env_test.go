package lifecycle

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
	"github.com/resctrl-mon/resctrl-mon/test/simenv"
)

// envOptions is how newEnv builds an env: on which resctrl, set up how, and the config.
type envOptions struct {
	fake  bool               // on the in-memory fake, not the simulator
	rmids int                // on a bare fake of that many RMIDs (bareFake), not one set up as sim
	sim   resctrlsim.Options // the simulator's options, or what the fake is set up as
	edits []func(*config.Config)
}

// envOption is one of newEnv's choices.
type envOption func(*envOptions)

// simOpts: the simulator is mounted with o; on the fake (inMemory), the fake is set up as
// that simulator would be.
func simOpts(o resctrlsim.Options) envOption { return func(eo *envOptions) { eo.sim = o } }

// withConfig: edit changes the configuration the env's Manager is built with (nil: none).
func withConfig(edit func(*config.Config)) envOption {
	return func(eo *envOptions) {
		if edit != nil {
			eo.edits = append(eo.edits, edit)
		}
	}
}

// inMemory: the env is on the in-memory fake, set up as the simulator with the same options
// would be (simenv.Fake: RMIDs, limbo, L3 domains, counter assignment; what it does not
// model fails the test, which then runs on the simulator only).
//
// Its Manager reads which cgroup a process is in from a /proc of the test's own
// (proctest.FakeProc): the processes e.proc starts are where the test process is, as the
// host's /proc shows them; those e.hold starts are in cgroups of their own, which need no
// root.
func inMemory() envOption { return func(eo *envOptions) { eo.fake = true } }

// bareFake: the env is on the in-memory fake with rmids RMIDs for monitoring groups and no
// counters, snapshots off (decisions that do not look at them), its Manager reading the
// host's /proc: no root, no FUSE. A test that runs on the simulator too builds its env in
// onBoth instead.
func bareFake(rmids int) envOption {
	return func(eo *envOptions) { eo.fake, eo.rmids = true, rmids }
}

// newEnv is every test's env: on the simulator (it skips without root or FUSE, as
// resctrlsim.MountT does) unless inMemory or bareFake puts it on the fake; its Manager's
// clock is the env's now.
func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	var eo envOptions
	for _, o := range opts {
		o(&eo)
	}
	edit := func(cfg config.Config) config.Config {
		for _, e := range eo.edits {
			e(&cfg)
		}
		return cfg
	}
	switch {
	case eo.rmids > 0:
		fake := resctrlfake.New(eo.rmids)
		cfg := config.Default()
		cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir, cfg.Log = "/nonexistent-resctrl", filepath.Join(t.TempDir(), "state"), "", "stderr"
		return fakeEnv(t, fake, fake, edit(cfg))
	case eo.fake:
		fe := simenv.Fake(t, eo.sim)
		e := fakeEnv(t, fe.Fake, fe.Groups, edit(fe.Config))
		e.cgproc = proctest.NewFakeProc(t)
		e.m.cg = cgroup.Host{Proc: e.cgproc.Dir}
		return e
	}
	o := eo.sim
	o.Debug = true
	se := simenv.New(t, o)
	cfg := edit(se.Config)
	m, err := New(cfg, slog.New(slog.DiscardHandler), kernel.Open)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, sim: se.Sim, cfg: cfg, m: m, now: time.Now()}
	m.now = func() time.Time { return e.now }
	return e
}

// fakeEnv is an env whose Manager reaches resctrl through rs, the fake or a wrapper of it.
func fakeEnv(t *testing.T, fake *resctrlfake.Resctrl, rs resctrlfs.Groups, cfg config.Config) *env {
	t.Helper()
	m, err := NewWith(cfg, slog.New(slog.DiscardHandler), rs)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, fake: fake, rs: rs, cfg: cfg, m: m, now: time.Now()}
	m.SetClock(func() time.Time { return e.now })
	return e
}

// newEnvFunc is newEnv on one resctrl, as onBoth's body is given it.
type newEnvFunc func(t *testing.T, opts ...envOption) *env

// onBoth runs body as two parallel subtests, "fake" and "sim", its newEnv on the fake set up
// as the simulator (inMemory) and on the simulator.
func onBoth(t *testing.T, body func(t *testing.T, newEnv newEnvFunc)) {
	t.Helper()
	onFake := func(t *testing.T, opts ...envOption) *env {
		return newEnv(t, append([]envOption{inMemory()}, opts...)...)
	}
	simenv.Both[newEnvFunc](t, onFake, newEnv, body)
}
