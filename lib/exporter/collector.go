package exporter

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/psi"
	"github.com/resctrl-mon/resctrl-mon/lib/psimetrics"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// Source is what the collector reads: *inventory.Inventory, or a stand-in in tests.
type Source interface {
	Pods(inventory.Options) ([]inventory.Pod, error)
	RMIDs() (inventory.RMIDs, error)
	Counts() (map[string]uint64, error)
	Assignment() (resctrlfs.Assignment, error)
}

var _ Source = (*inventory.Inventory)(nil)

// Options shape the collector.
type Options struct {
	// SnapshotDir is where the .begin and .end snapshots are ("" when they are off).
	SnapshotDir string
	// PSI reads pressure through this host's procfs; nil exports no pressure.
	PSI *cgroup.Host
	// PSIAverages adds the kernel's 10/60/300 s averages (psimetrics.Options.Averages).
	PSIAverages bool
	// Log receives what an operator must know once (no PSI on this host); nil discards.
	Log *slog.Logger
}

// Collector is a prometheus.Collector over the inventory. Register it on any registry; it
// is safe for concurrent scrapes (they are serialised: each one updates the last readings).
type Collector struct {
	src  Source
	opts Options
	log  *slog.Logger

	counters                                                                               map[string]counterMetric
	nodeCounters                                                                           map[string]counterMetric // an SNC node's, by file
	other                                                                                  *prometheus.Desc
	podInfo, groups, rmidsUsed, rmidsTotal, snapshots, psiAvailable, duration, inventoryUp *prometheus.Desc
	outcomes, snapshotsWritten                                                             *prometheus.Desc
	mbmAssigned, mbmCounters, mbmAvailable                                                 *prometheus.Desc

	failures                         *prometheus.Desc
	resets, readErrors, sourceErrors *prometheus.CounterVec

	psi *psimetrics.Collector // nil without PSI

	mu         sync.Mutex // held for a whole Collect
	tracks     map[string]*groupTrack
	psiTargets []psimetrics.Target
	cgroupRoot cgroup.Root // where the cgroup2 hierarchy is mounted, once found
}

// New returns a collector reading src. It checks once whether the kernel keeps PSI and
// says so in the log if not.
func New(src Source, o Options) (*Collector, error) {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Collector{src: src, opts: o, log: log, counters: map[string]counterMetric{}, nodeCounters: map[string]counterMetric{}, tracks: map[string]*groupTrack{}}
	// The mon_data files with a kind and unit (resctrlfs.CounterMeta, as goresctrl has them)
	// get a metric each; any other is resctrl_mon_counter{counter="<file>"}.
	for _, f := range resctrlfs.Counters {
		c.counters[f] = newCounterMetric(f)
	}
	for _, f := range nodeCounters {
		c.nodeCounters[f] = newNodeMetric(f)
	}
	c.other = prometheus.NewDesc(Prefix+"counter", "A mon_data file resctrl-mon has no kind or unit for, as the kernel prints it.",
		append(slices.Clone(counterLabels), "counter"), nil)
	c.podInfo = prometheus.NewDesc(Prefix+"pod_info",
		"One per owned group: its pod and state (inventory.States: active, late-assigned, stopped, idle, pending, missing); late-assigned counters are a lower bound.",
		[]string{"pod_uid", "namespace", "pod", "group", "class", "state"}, nil)
	c.groups = prometheus.NewDesc(Prefix+"groups", "Owned groups by state; absent when the registry cannot be read (inventory_up 0).", []string{"state"}, nil)
	c.rmidsUsed = prometheus.NewDesc(Prefix+"rmids_used", "RMIDs held by every group in resctrl, ours or not (the kernel does not show those in limbo).", nil, nil)
	c.rmidsTotal = prometheus.NewDesc(Prefix+"num_rmids", "num_rmids: how many groups resctrl can have (the smaller one when PERF_PKG has its own).", nil, nil)
	c.snapshots = prometheus.NewDesc(Prefix+"snapshots", "Snapshot files present in the snapshot directory, by kind.", []string{"kind"}, nil)
	c.outcomes = prometheus.NewDesc(Prefix+"outcomes_total",
		"What the front ends did, by front end (hook, adapter, reconcile) and action (vocab.Actions): one count per call (each hook call, NRI event, step of reconcile or of the sweep), refusals and failures included, since the state dir was made (boot, on tmpfs).",
		[]string{"source", "action"}, nil)
	c.snapshotsWritten = prometheus.NewDesc(Prefix+"snapshots_written_total", "Snapshots written, by kind, since the state dir was made.", []string{"kind"}, nil)
	c.psiAvailable = prometheus.NewDesc(Prefix+"pressure_available", "1 if the kernel keeps pressure stall information (PSI), else 0.", nil, nil)
	c.inventoryUp = prometheus.NewDesc(Prefix+"inventory_up", "1 if the registry of groups could be read in this scrape (groups and pods are exported), else 0.", nil, nil)
	c.duration = prometheus.NewDesc(Prefix+"scrape_duration_seconds", "How long collecting these metrics took.", nil, nil)
	c.mbmAssigned = prometheus.NewDesc(Prefix+"mbm_assigned",
		"In mbm_event counter assignment mode (Linux ≥ 6.18, AMD ABMC): 1 if the kernel counts the pod's bandwidth counter in that domain (a hardware counter is assigned), 0 if it reads Unassigned and has no series; absent in other modes.",
		append(slices.Clone(counterLabels), "counter"), nil)
	c.mbmCounters = prometheus.NewDesc(Prefix+"mbm_counters", "In mbm_event counter assignment mode: num_mbm_cntrs, the assignable bandwidth counters of each domain (two per group counted).", []string{"resource", "domain"}, nil)
	c.mbmAvailable = prometheus.NewDesc(Prefix+"mbm_counters_available", "In mbm_event counter assignment mode: available_mbm_cntrs, the bandwidth counters of each domain no group holds.", []string{"resource", "domain"}, nil)
	c.resets = prometheus.NewCounterVec(prometheus.CounterOpts{Name: Prefix + "mon_data_resets_total",
		Help: "Counter readings lower than the last one (decrease), a group's new life (new_life), or a bandwidth counter newly assigned by the kernel, which counts from zero (assignment): absorbed, never exported as a reset."}, []string{"cause"})
	c.readErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: Prefix + "mon_data_read_errors_total",
		Help: "Counter files that gave no number, by reason; their series were left out of that scrape."}, []string{"reason"})
	c.failures = prometheus.NewDesc(Prefix+"failures_total",
		"Failures recorded in the state dir by the hooks, reconcile and the NRI adapter, by reason (identity is a refusal), since the state dir was made (boot, on tmpfs).",
		[]string{"reason"}, nil)
	c.sourceErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: Prefix + "source_errors_total",
		Help: "Reads that failed while collecting, by source; the rest was still exported."}, []string{"source"})
	// Every label value from the start: rate() needs a series before its first increase.
	for _, cause := range ResetCauses {
		c.resets.WithLabelValues(cause)
	}
	for _, r := range ReadErrorReasons {
		c.readErrors.WithLabelValues(r)
	}
	for _, s := range sources {
		c.sourceErrors.WithLabelValues(s)
	}
	if o.PSI != nil {
		if err := psi.Available(*o.PSI); err != nil {
			log.Warn("no pressure (PSI) metrics on this host; exporting the rest", "err", err)
		} else {
			p, err := psimetrics.New(psimetrics.Options{Labels: PressureLabels(), Averages: o.PSIAverages},
				func() []psimetrics.Target { return c.psiTargets })
			if err != nil {
				return nil, fmt.Errorf("exporter: %w", err)
			}
			c.psi, c.cgroupRoot.Host = p, *o.PSI
		}
	}
	return c, nil
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.counters {
		ch <- m.desc
	}
	for _, m := range c.nodeCounters {
		ch <- m.desc
	}
	for _, d := range []*prometheus.Desc{c.other, c.podInfo, c.groups, c.rmidsUsed, c.rmidsTotal, c.snapshots, c.psiAvailable, c.duration, c.inventoryUp,
		c.outcomes, c.snapshotsWritten, c.failures, c.mbmAssigned, c.mbmCounters, c.mbmAvailable} {
		ch <- d
	}
	for _, v := range []*prometheus.CounterVec{c.resets, c.readErrors, c.sourceErrors} {
		v.Describe(ch)
	}
	if c.psi != nil {
		c.psi.Describe(ch)
	}
}

// Collect implements prometheus.Collector: it reads the inventory, every counter and every
// pressure file now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	start := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	pods, err := c.src.Pods(inventory.Options{Counters: true, Subdomains: true})
	if err != nil {
		c.sourceError(SourceRegistry, err)
	}
	asg, aerr := c.src.Assignment()
	if aerr != nil {
		c.sourceError(SourceAssignment, aerr)
	}
	byState := map[inventory.State]int{}
	live := make(map[string]bool, len(pods))
	for _, p := range pods {
		byState[p.State]++
		live[p.Path] = true
		c.emit(ch, c.podInfo, prometheus.GaugeValue, 1, p.PodUID, p.Namespace, p.PodName, p.Path, p.Class, string(p.State))
		c.collectCounters(ch, p, asg.Counting())
	}
	up := 0.0
	if err == nil || len(pods) > 0 {
		// Pruning also drops the last readings of a record that could not be read this
		// time: harmless, its series restart from zero, which rate() takes as an ordinary
		// reset. Errors per group must not keep gone groups' readings forever.
		c.prune(live)
		// Counts from a registry that could not be read at all would be zeros that look
		// like a node without pods.
		up = 1
		for _, s := range inventory.States {
			c.emit(ch, c.groups, prometheus.GaugeValue, float64(byState[s]), string(s))
		}
	}
	c.emit(ch, c.inventoryUp, prometheus.GaugeValue, up)
	c.collectHealth(ch)
	c.collectAssignment(ch, asg)
	c.collectPSI(ch, pods)
	for _, v := range []*prometheus.CounterVec{c.resets, c.readErrors, c.sourceErrors} {
		v.Collect(ch)
	}
	c.emit(ch, c.duration, prometheus.GaugeValue, time.Since(start).Seconds())
}

// emit sends a const metric; label values that are not valid (not UTF-8) cost the series,
// never the scrape.
func (c *Collector) emit(ch chan<- prometheus.Metric, d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
	m, err := prometheus.NewConstMetric(d, t, v, labels...)
	if err != nil {
		c.sourceError(SourceLabels, err)
		return
	}
	ch <- m
}

// Sources of a failed read, the label of resctrl_mon_source_errors_total.
const (
	SourceRegistry  = "registry"  // the state dir's group records
	SourceRMIDs     = "rmids"     // info/*/num_rmids and the group directories
	SourceCounts    = "counts"    // the state dir's outcome and snapshot counts
	SourceSnapshots = "snapshots" // the snapshot directory
	SourceCgroup    = "cgroup"    // the cgroup2 mount, for pressure
	SourceLabels    = "labels"    // a label value that is not UTF-8
	// SourceAssignment: info/L3_MON/mbm_assign_mode and the counters of each domain.
	SourceAssignment = "assignment"
)

var sources = []string{SourceRegistry, SourceRMIDs, SourceCounts, SourceSnapshots, SourceCgroup, SourceLabels, SourceAssignment}

func (c *Collector) sourceError(source string, err error) {
	c.sourceErrors.WithLabelValues(source).Inc()
	c.log.Debug("exporter: read failed", "source", source, "err", err)
}
