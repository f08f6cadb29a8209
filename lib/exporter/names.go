package exporter

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// Prefix starts every metric name.
const Prefix = "resctrl_mon_"

// counterLabels are the labels of every counter series, in this order.
var counterLabels = []string{"pod_uid", "namespace", "pod", "group", "class", "resource", "domain"}

// nodeLabels are the labels of a Sub-NUMA Cluster node's series: the cache's, and the
// node's id (mon_data/mon_L3_<domain>/mon_sub_L3_<subdomain>/).
var nodeLabels = append(slices.Clone(counterLabels), "subdomain")

// nodePrefix starts the name of a Sub-NUMA Cluster node's family: families of their own, so
// that every sum over a pod's series (the chart's rules and dashboard, anyone's queries)
// still counts each byte once on an SNC node, where the cache's files already sum its nodes.
const nodePrefix = Prefix + "snc_"

// nodeCounters are the counters the kernel also shows per SNC node: L3's events
// (mon_add_all_files of the L3 resource in each mon_sub_L3_YY).
var nodeCounters = []string{resctrlfs.LLCOccupancy, resctrlfs.MBMTotal, resctrlfs.MBMLocal}

// PressureLabels are the labels of every pressure series, in this order: a pod's own cgroup
// has container "" and container_id "" (as cAdvisor labels it); each container's cgroup its
// name (its id when none was recorded: see psiTargets) and its runtime's id.
func PressureLabels() []string {
	return []string{"pod_uid", "namespace", "pod", "container", "container_id"}
}

// units turn a counter's UCUM unit into the metric name's base unit and the factor to it.
var units = map[string]struct {
	word  string
	scale float64
}{
	"By": {"bytes", 1},
	"J":  {"joules", 1},
	"nF": {"farads", 1e-9}, // AET activity: the kernel counts nanofarads
}

// counterMetric is how one counter file is exported.
type counterMetric struct {
	desc       *prometheus.Desc
	cumulative bool
	scale      float64
}

// newCounterMetric names a known counter in Prometheus' style: the base unit once, then
// _total for a cumulative one ("mbm_total_bytes" is resctrl_mon_mbm_total_bytes_total).
func newCounterMetric(file string) counterMetric {
	cum, unit := resctrlfs.CounterMeta(file)
	u := units[unit]
	name := Prefix + counterName(file)
	kind := "Gauge"
	if cum {
		kind = "Counter"
	}
	if u.scale == 0 {
		u.scale = 1
	}
	help := kind + " of the resctrl file mon_data/mon_<resource>_<NN>/" + file + " of the pod's monitoring group"
	if slices.Contains(nodeCounters, file) {
		help += " (on a Sub-NUMA Cluster node, the sum of the cache's nodes)"
	}
	if u.word != "" {
		help += ", in " + u.word
	}
	if u.scale != 1 {
		help += fmt.Sprintf(" (the kernel's %s times %g)", unit, u.scale)
	}
	if cum {
		help += "; counted since the exporter first read it, lower readings absorbed (use rate or increase)"
	}
	return counterMetric{desc: prometheus.NewDesc(name, help+".", counterLabels, nil), cumulative: cum, scale: u.scale}
}

// counterName is a counter's family name after the prefix: the base unit once, then _total
// for a cumulative one.
func counterName(file string) string {
	cum, unit := resctrlfs.CounterMeta(file)
	name := strings.TrimSuffix(file, "_bytes")
	if w := units[unit].word; w != "" {
		name += "_" + w
	}
	if cum {
		name += "_total"
	}
	return name
}

// newNodeMetric is newCounterMetric's family for one SNC node's file, named with nodePrefix
// ("resctrl_mon_snc_mbm_total_bytes_total").
func newNodeMetric(file string) counterMetric {
	m := newCounterMetric(file)
	cum, _ := resctrlfs.CounterMeta(file)
	name := nodePrefix + counterName(file)
	help := "On a Sub-NUMA Cluster node, one SNC node's " + file + " of the pod's monitoring group: the resctrl file mon_data/mon_L3_<domain>/mon_sub_L3_<subdomain>/" + file +
		", subdomain the node's id; the family without snc_ has the sum of the cache's nodes, so never add the two"
	if cum {
		help += "; counted since the exporter first read it, lower readings absorbed (use rate or increase)"
	}
	return counterMetric{desc: prometheus.NewDesc(name, help+".", nodeLabels, nil), cumulative: cum, scale: m.scale}
}
