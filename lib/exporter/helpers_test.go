package exporter_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
	"github.com/resctrl-mon/resctrl-mon/test/simenv"
)

// env is a simulator with AET, a lifecycle manager to place processes, and the collector
// on a pedantic registry.
type env struct {
	sim *resctrlsim.Sim
	cfg config.Config
	m   *lifecycle.Manager
	reg *prometheus.Registry
}

func newEnv(t *testing.T, host *cgroup.Host) *env {
	t.Helper()
	return newEnvOn(t, host, resctrlsim.Options{PerfPkgDomains: 1, L3Domains: 2})
}

// newEnvOn is newEnv on a simulator with options o.
func newEnvOn(t *testing.T, host *cgroup.Host, o resctrlsim.Options) *env {
	t.Helper()
	se := simenv.New(t, o)
	sim, cfg := se.Sim, se.Config
	cfg.Retention = config.Duration(time.Hour)
	m, err := lifecycle.New(cfg, slog.New(slog.DiscardHandler), kernel.Open)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Open(cfg, resctrlfs.MountFor(cfg.ResctrlSimulator))
	if err != nil {
		t.Fatal(err)
	}
	c, err := exporter.New(inv, exporter.Options{SnapshotDir: cfg.SnapshotDir, PSI: host})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	return &env{sim: sim, cfg: cfg, m: m, reg: reg}
}

// place puts pid in pod uid's group as container id.
func (e *env) place(t *testing.T, uid, id string, pid int) {
	t.Helper()
	e.placeIn(t, uid, id, pid, "")
}

// placeIn places a container as place does, as CRI-O would with the spec's cgroupsPath
// naming its cgroup (the pod's cgroup is its parent).
func (e *env) placeIn(t *testing.T, uid, id string, pid int, cgroupsPath string) {
	t.Helper()
	a := map[string]string{identity.CRIOPodUID: uid, identity.CRIOSandboxID: strings.Repeat(uid[:1], 64),
		identity.CRIOContainerType: "container", identity.CRIOPodNamespace: "shop", identity.CRIOPodName: "pod-" + uid[:4]}
	idn, err := identity.FromAnnotations(id, a)
	if err != nil {
		t.Fatal(err)
	}
	p := lifecycle.Placement{ContainerID: id, Pid: pid, Pod: idn, Annotations: a, PodCgroup: identity.PodCgroup(idn, id, cgroupsPath)}
	if out, err := e.m.Place(p); err != nil {
		t.Fatalf("place %s: %+v, %v", id, out, err)
	}
}

// gather scrapes the registry; the pedantic registry checks every metric against its
// description, and a failed scrape fails the test.
func (e *env) gather(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatalf("scrape failed: %v", err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// find returns the series of mf whose labels include want, as "name=value" pairs.
func find(mf *dto.MetricFamily, want ...string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range mf.GetMetric() {
		var have []string
		for _, l := range m.GetLabel() {
			have = append(have, l.GetName()+"="+l.GetValue())
		}
		ok := true
		for _, w := range want {
			ok = ok && slices.Contains(have, w)
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	}
	return m.GetUntyped().GetValue()
}

// one returns the value of the single series of family name with the labels want.
func one(t *testing.T, fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	t.Helper()
	ms := find(fams[name], want...)
	if len(ms) != 1 {
		t.Fatalf("%s%v: %d series, want 1", name, want, len(ms))
	}
	return value(ms[0])
}

func labelNames(m *dto.Metric) string {
	var ns []string
	for _, l := range m.GetLabel() {
		ns = append(ns, l.GetName())
	}
	return strings.Join(ns, ",")
}

// waitFor scrapes until cond holds, failing after the deadline.
func (e *env) waitFor(t *testing.T, what string, cond func(map[string]*dto.MetricFamily) bool) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		fams := e.gather(t)
		if cond(fams) {
			return fams
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %s", what)
		}
		time.Sleep(50 * time.Millisecond) // polling a condition with a deadline
	}
}

func group(uid string) string { return "group=mon_groups/" + uid }

func sum(ms []*dto.Metric) float64 {
	s := 0.0
	for _, m := range ms {
		s += value(m)
	}
	return s
}

func itoa(n int) string { return fmt.Sprint(n) }

// serveNode serves a node exporter of cfg on a loopback port until the test ends; an error
// from its shutdown goes to report (t.Logf or t.Errorf: the caller's verdict).
func serveNode(t *testing.T, cfg config.Config, o exporter.NodeOptions, report func(string, ...any)) *exporter.Node {
	t.Helper()
	o.Listen = "127.0.0.1:0"
	if o.Mount == nil { // the mount check a front end picks from its configuration
		o.Mount = resctrlfs.MountFor(cfg.ResctrlSimulator)
	}
	n, err := exporter.NewNode(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			report("serve: %v", err)
		}
	})
	return n
}
