package sidecar

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/psi"
)

// seedCollector exports the seed's metrics, so its dashboards keep working:
//
//	cgroup_monitor_sc_monitored_{cpu,mem,io}_psi{type="some|full",window="10s|60s|300s|total"}
//
// gauges, the averages in percent and the total in microseconds, as the kernel writes
// them; cpu has only type="some" (the seed never read cpu's full line). Unlike the seed,
// a file that cannot be read leaves its series out instead of repeating the last values
// forever, and no label is added: the seed had none but type and window.
type seedCollector struct {
	dirs  func() []string
	descs map[psi.Resource]*prometheus.Desc
}

func newSeedCollector(dirs func() []string) *seedCollector {
	d := func(res, help string) *prometheus.Desc {
		return prometheus.NewDesc("cgroup_monitor_sc_monitored_"+res+"_psi", help, []string{"type", "window"}, nil)
	}
	return &seedCollector{dirs: dirs, descs: map[psi.Resource]*prometheus.Desc{
		psi.CPU:    d("cpu", "CPU PSI of monitored container"),
		psi.Memory: d("mem", "Mem PSI of monitored container"),
		psi.IO:     d("io", "IO PSI of monitored container"),
	}}
}

func (c *seedCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *seedCollector) Collect(ch chan<- prometheus.Metric) {
	for _, dir := range c.dirs() {
		for _, r := range psi.Resources() {
			p, err := psi.Read(dir, r)
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
}
