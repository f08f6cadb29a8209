package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/podevents"
	"github.com/resctrl-mon/resctrl-mon/lib/psi"
	"github.com/resctrl-mon/resctrl-mon/lib/psimetrics"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/nri-adapter/nriplugin"
)

// family is one metric family as a scrape shows it.
type family struct {
	Name, Type, Unit, Labels, Help, Note string
}

// freeLabels take any value (a pod, a group, a domain); the others' values are a fixed list,
// which the page gives.
var freeLabels = []string{"pod_uid", "namespace", "pod", "group", "class", "resource", "domain", "subdomain", "container", "container_id", "counter"}

// metricsData scrapes the exporter's collector over a node of one pod in every state, each
// with every counter resctrl-mon knows and one it does not, and the pressure collector over
// one cgroup: what a real scrape has, every family, type, label and help, without resctrl.
func metricsData() (any, error) {
	tmp, err := os.MkdirTemp("", "docgen-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	c, err := exporter.New(sampleNode{}, exporter.Options{SnapshotDir: tmp})
	if err != nil {
		return nil, err
	}
	main, err := gather(c)
	if err != nil {
		return nil, err
	}
	plain, err := pressure(tmp, false)
	if err != nil {
		return nil, err
	}
	avg, err := pressure(tmp, true)
	if err != nil {
		return nil, err
	}
	build, err := gather(exporter.BuildInfo())
	if err != nil {
		return nil, err
	}
	adapter, err := adapterFamilies()
	if err != nil {
		return nil, err
	}
	events, err := gather(podevents.New(config.Default(), "", nil, nil).Collector())
	if err != nil {
		return nil, err
	}
	var out []family
	for _, mf := range slices.Concat(main, avg, build, adapter, events) {
		f := describe(mf)
		switch {
		case slices.Contains(events, mf):
			f.Note = "with the config's `events.enabled` ([Events on pods](../operations/events.md))"
		case slices.Contains(adapter, mf):
			f.Note = "the NRI adapter's own (`resctrl-mon-nri --health-listen`, or `--listen`)"
		case !slices.ContainsFunc(slices.Concat(main, plain, build), func(p *dto.MetricFamily) bool { return p.GetName() == mf.GetName() }):
			f.Note = "with `--pressure-averages`"
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b family) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Described lists the name of every family c describes: a test checks each is on the page,
// so a family the sample node does not bring out cannot be left off unnoticed.
func Described(c prometheus.Collector) []string {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	name := regexp.MustCompile(`fqName: "([^"]+)"`)
	var out []string
	for d := range ch {
		if m := name.FindStringSubmatch(d.String()); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

func gather(c prometheus.Collector) ([]*dto.MetricFamily, error) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	return reg.Gather()
}

// pressure gathers the pressure collector, with the exporter's labels, over one cgroup
// directory in tmp whose files show both lines.
func pressure(tmp string, averages bool) ([]*dto.MetricFamily, error) {
	dir := filepath.Join(tmp, "cgroup")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, r := range psi.Resources() {
		line := "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
		if err := os.WriteFile(filepath.Join(dir, r.File()), []byte(line), 0o644); err != nil {
			return nil, err
		}
	}
	labels := exporter.PressureLabels()
	values := make([]string, len(labels))
	p, err := psimetrics.New(psimetrics.Options{Labels: labels, Averages: averages},
		func() []psimetrics.Target { return []psimetrics.Target{{Dir: dir, Labels: values}} })
	if err != nil {
		return nil, err
	}
	return gather(p)
}

func describe(mf *dto.MetricFamily) family {
	f := family{Name: code(mf.GetName()), Type: strings.ToLower(mf.GetType().String()), Help: cell(mf.GetHelp())}
	base := strings.TrimSuffix(mf.GetName(), "_total")
	if i := strings.LastIndexByte(base, '_'); i >= 0 && slices.Contains([]string{"bytes", "seconds", "joules", "farads", "ratio"}, base[i+1:]) {
		f.Unit = base[i+1:]
	}
	values := map[string][]string{}
	var names []string
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if !slices.Contains(names, l.GetName()) {
				names = append(names, l.GetName())
			}
			if !slices.Contains(freeLabels, l.GetName()) && !slices.Contains(values[l.GetName()], l.GetValue()) {
				values[l.GetName()] = append(values[l.GetName()], l.GetValue())
			}
		}
	}
	var parts []string
	for _, n := range names {
		if v := values[n]; len(v) > 0 {
			for i := range v {
				v[i] = code(v[i])
			}
			parts = append(parts, code(n)+" ("+strings.Join(v, ", ")+")")
			continue
		}
		parts = append(parts, code(n))
	}
	f.Labels = strings.Join(parts, ", ")
	return f
}

// sampleNode is a node with one pod in every state, each with a reading of every counter
// resctrl-mon knows (on an L3 and a PERF_PKG domain, and an L3 one's SNC node) and of one it
// does not.
type sampleNode struct{}

func (sampleNode) Pods(inventory.Options) ([]inventory.Pod, error) {
	var pods []inventory.Pod
	for i, s := range inventory.States {
		p := inventory.Pod{Group: fmt.Sprint(i), Path: "mon_groups/" + fmt.Sprint(i), PodUID: fmt.Sprint(i), State: s, Created: time.Unix(0, 0)}
		for _, name := range append(slices.Clone(resctrlfs.Counters), "a_counter_resctrl_mon_does_not_know") {
			cum, unit := resctrlfs.CounterMeta(name)
			for _, d := range []string{"mon_L3_00", "mon_PERF_PKG_00"} {
				p.Readings = append(p.Readings, resctrlfs.Reading{Domain: d, Name: name, Cumulative: cum, Unit: unit})
			}
			if name != resctrlfs.CoreEnergy && name != resctrlfs.Activity {
				// As on a Sub-NUMA Cluster node: an L3 domain's node's own file.
				p.Readings = append(p.Readings, resctrlfs.Reading{Domain: "mon_L3_00", Sub: "mon_sub_L3_00", Name: name, Cumulative: cum, Unit: unit})
			}
		}
		pods = append(pods, p)
	}
	return pods, nil
}

func (sampleNode) RMIDs() (inventory.RMIDs, error)                { return inventory.RMIDs{Used: 1, Total: 64}, nil }
func (sampleNode) Failures(time.Time) ([]registry.Failure, error) { return nil, nil }
func (sampleNode) Counts() (map[string]uint64, error)             { return map[string]uint64{}, nil }

// Assignment is a node in mbm_event mode, so the counter assignment metrics are documented.
func (sampleNode) Assignment() (resctrlfs.Assignment, error) {
	return resctrlfs.Assignment{Mode: resctrlfs.AssignModeEvent, Counters: map[string]int{"0": 32}, Available: map[string]int{"0": 30}}, nil
}

// adapterFamilies is a scrape of the NRI adapter's own collector as it starts.
func adapterFamilies() ([]*dto.MetricFamily, error) {
	p := nriplugin.Unconfigured(slog.New(slog.DiscardHandler), errors.New("docs"), nil)
	return gather(p.Collector())
}
