package nriplugin

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestAdapterHealth: what the adapter says of itself through NRI's real runtime side. Not
// ready before it is registered and synchronised, ready after; its events counted by kind and
// outcome; an event whose work waits on a held pod's lock past its budget makes it not ready
// at once and not live once past the stuck limit, and both come back when the work ends; the
// runtime gone, it is not ready, and says it is not connected.
func TestAdapterHealth(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		// The budget at its floor: a held pod's lock outlasts it (lifecycle waits longer).
		e := newEnv(t, resctrlsim.Options{}, func(c *config.Config) { c.HookBudget = config.Duration(minBudget) })
		sock, drop := proxy(t, e.rt.sock)
		p, err := e.newPlugin(e.cfg, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Ready(); err == nil || !strings.Contains(err.Error(), "not connected") {
			t.Errorf("before Run: Ready() = %v, want not connected", err)
		}
		a := e.runSynced(p, Options{Socket: sock})
		if err := poll.Until(syncDeadline, p.Ready); err != nil {
			t.Fatalf("not ready after its Synchronize: %v", err)
		}
		if err := p.Live(); err != nil {
			t.Errorf("Live() = %v after a clean start", err)
		}
		wantMetric(t, p, "resctrl_mon_nri_connected", nil, 1)
		// Within its budget or past it (100 ms, on a busy machine): counted once.
		if n := metric(t, p, "resctrl_mon_nri_events_total", map[string]string{"event": "Synchronize"}); n != 1 {
			t.Errorf("%v Synchronize events counted, want 1", n)
		}
		if sync := metric(t, p, "resctrl_mon_nri_last_synchronize_timestamp_seconds", nil); sync < float64(time.Now().Add(-time.Hour).Unix()) {
			t.Errorf("last Synchronize at %v, want now", sync)
		}

		pd := pod(uidA, sbA, "default", "web")
		e.rt.runPod(pd)
		// The pod's lock held: its first StartContainer is answered at its budget and its
		// work goes on, waiting.
		p.SetStuckAfter(time.Nanosecond)
		held, release := make(chan struct{}), make(chan struct{})
		go func() {
			_ = e.manager().Store().Update(uidA, 30*time.Second, func(*registry.Tx) error { close(held); <-release; return nil })
		}()
		<-held
		released := false
		defer func() {
			if !released {
				close(release)
			}
		}()
		first := proctest.Hold(t, "sleep 600")
		if err := e.rt.sendStart(pd, &api.Container{Id: "c1", Name: "c1", Pid: uint32(first.Pid)}); err != nil {
			t.Fatalf("fail-open: %v", err)
		}
		wantMetric(t, p, "resctrl_mon_nri_events_total", map[string]string{"event": "StartContainer", "outcome": "past-budget"}, 1)
		if err := p.Ready(); err == nil || !strings.Contains(err.Error(), "StartContainer's work") {
			t.Errorf("an event's work past its budget: Ready() = %v, want not keeping up", err)
		}
		if err := p.Live(); err == nil || !strings.Contains(err.Error(), "stuck") {
			t.Errorf("an event's work past its budget and the stuck limit: Live() = %v, want stuck", err)
		}
		if busy := metric(t, p, "resctrl_mon_nri_workers_busy", nil); busy != 1 {
			t.Errorf("%v workers busy, want the one waiting on the lock", busy)
		}
		if oldest, d := metric(t, p, "resctrl_mon_nri_oldest_work_seconds", nil), eventBudget(e.cfg, defaultRequestTimeout); oldest < d.Seconds() {
			t.Errorf("the oldest work has run %vs, want past its %s budget", oldest, d)
		}
		close(release)
		released = true
		if err := poll.Until(syncDeadline, func() error { return errors.Join(p.Ready(), p.Live()) }); err != nil {
			t.Errorf("once the work ended: %v", err)
		}
		wantMetric(t, p, "resctrl_mon_nri_oldest_work_seconds", nil, 0)

		drop()
		select {
		case <-a.ended:
			if !errors.Is(a.err, ErrRuntimeGone) {
				t.Errorf("Run returned %v, want ErrRuntimeGone", a.err)
			}
		case <-time.After(syncDeadline):
			t.Fatal("the adapter did not notice the runtime went")
		}
		if err := p.Ready(); err == nil || !strings.Contains(err.Error(), "not connected") {
			t.Errorf("the runtime gone: Ready() = %v, want not connected", err)
		}
		wantMetric(t, p, "resctrl_mon_nri_connected", nil, 0)
	})
}

// metric is the sum of the adapter's samples name{labels...} (labels a subset of theirs);
// the test fails when there is none.
func metric(t *testing.T, p *Plugin, name string, labels map[string]string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(p.Collector()); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum, found := 0.0, false
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, labels) {
				sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("no sample %s%v", name, labels)
	}
	return sum
}

func wantMetric(t *testing.T, p *Plugin, name string, labels map[string]string, want float64) {
	t.Helper()
	if got := metric(t, p, name, labels); got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

func hasLabels(m *dto.Metric, labels map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := labels[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(labels)
}
