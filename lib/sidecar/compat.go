package sidecar

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/psi"
	"github.com/resctrl-mon/resctrl-mon/lib/psimetrics"
)

// seedFamily exports cgroup_monitor_sc's metrics, so dashboards built on them keep working:
//
//	cgroup_monitor_sc_monitored_{cpu,mem,io}_psi{type="some|full",window="10s|60s|300s|total"}
//
// gauges, the averages in percent and the total in microseconds, as the kernel writes
// them. They are cgroup_monitor_sc's series exactly, neither more nor other: cpu has only
// type="some", as it exports, and no label is added to its type and window. A file that
// cannot be read leaves its series out: repeating the last values would pass a stale
// reading for a current one. It is a family of the main collector
// (psimetrics.Options.Also): the files are read once for both.
type seedFamily struct {
	descs map[psi.Resource]*prometheus.Desc
}

var _ psimetrics.Family = (*seedFamily)(nil)

func newSeedFamily() *seedFamily {
	d := func(res, help string) *prometheus.Desc {
		return prometheus.NewDesc("cgroup_monitor_sc_monitored_"+res+"_psi", help, []string{"type", "window"}, nil)
	}
	return &seedFamily{descs: map[psi.Resource]*prometheus.Desc{
		psi.CPU:    d("cpu", "CPU PSI of monitored container"),
		psi.Memory: d("mem", "Mem PSI of monitored container"),
		psi.IO:     d("io", "IO PSI of monitored container"),
	}}
}

func (c *seedFamily) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *seedFamily) Emit(ch chan<- prometheus.Metric, _ psimetrics.Target, s psi.Sample) {
	for _, r := range psi.Resources() {
		p, err := s.Get(r)
		if err != nil {
			continue // counted by the main collector's read errors
		}
		kinds := []psi.Kind{psi.Some, psi.Full}
		if r == psi.CPU {
			kinds = kinds[:1]
		}
		for _, k := range kinds {
			l := p.Line(k)
			if !l.Present {
				continue
			}
			for _, w := range []struct {
				window string
				v      float64
			}{{"10s", l.Avg10}, {"60s", l.Avg60}, {"300s", l.Avg300}, {"total", float64(l.Total)}} {
				ch <- prometheus.MustNewConstMetric(c.descs[r], prometheus.GaugeValue, w.v, string(k), w.window)
			}
		}
	}
}
