package exporter

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// Prefix starts every metric name.
const Prefix = "resctrl_mon_"

// counterLabels are the labels of every counter series, in this order.
var counterLabels = []string{"pod_uid", "namespace", "pod", "group", "class", "resource", "domain"}

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
	name := Prefix + strings.TrimSuffix(file, "_bytes")
	if u.word != "" {
		name += "_" + u.word
	}
	kind := "Gauge"
	if cum {
		name += "_total"
		kind = "Counter"
	}
	if u.scale == 0 {
		u.scale = 1
	}
	help := kind + " of the resctrl file mon_data/mon_<resource>_<NN>/" + file + " of the pod's monitoring group"
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
