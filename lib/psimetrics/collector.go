// Package psimetrics exports cgroup v2 pressure (lib/psi) to Prometheus, in the style of
// cAdvisor and the kubelet under resctrl-mon's prefix:
//
//	resctrl_mon_pressure_{cpu,memory,io}_waiting_seconds_total   PSI "some": at least one task waited
//	resctrl_mon_pressure_{cpu,memory,io}_stalled_seconds_total   PSI "full": all non-idle tasks waited
//	resctrl_mon_pressure_{cpu,memory,io}_{waiting,stalled}_ratio{window="10s|60s|300s"}
//	                                                             the kernel's running averages as a
//	                                                             ratio 0..1, only with Options.Averages
//	resctrl_mon_pressure_read_errors_total{resource,reason}      pressure files that could not be read
//
// The counters are the kernel's cumulative microseconds in seconds. Files are read when
// Prometheus scrapes, never in the background. A file that cannot be read leaves its
// series out of that scrape and counts a read error by reason; it never fails the scrape
// and is never exported as 0 (a 0 would look like an idle container). A line the kernel
// does not write (cpu "full" before Linux 5.13) is left out the same way, without an error.
package psimetrics

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/psi"
)

// Prefix starts every metric name.
const Prefix = "resctrl_mon_pressure_"

// Target is one cgroup to export.
type Target struct {
	// Dir is the cgroup v2 directory (see cgroup.Host.ProcessDir).
	Dir string
	// Labels are the values of Options.Labels, in the same order.
	Labels []string
}

// Options shape the metrics.
type Options struct {
	// Labels are the names of the labels every target carries, e.g. pod and container.
	Labels []string
	// Averages adds the kernel's 10, 60 and 300 second running averages. Off by default:
	// rate() over the counters gives the same for any window, and the averages triple the
	// series.
	Averages bool
	// Also, if set, exports another family from the same readings of every target, after
	// the collector's own series, without reading the files again (the sidecar's seed
	// metrics). Its errors are the collector's read errors.
	Also Family
}

// Family is more series made from the pressure the collector read.
type Family interface {
	Describe(ch chan<- *prometheus.Desc)
	Emit(ch chan<- prometheus.Metric, t Target, s psi.Sample)
}

// ReasonBadTarget counts a target skipped because its labels do not fit Options.Labels,
// are not UTF-8, or repeat another target's (its series would make the whole scrape fail).
const ReasonBadTarget psi.Reason = "bad_target"

// Collector is a prometheus.Collector of the targets' pressure.
type Collector struct {
	opts    Options
	targets func() []Target
	total   map[series]*prometheus.Desc
	ratio   map[series]*prometheus.Desc
	errors  *prometheus.CounterVec
}

type series struct {
	res  psi.Resource
	kind psi.Kind
}

// windowLabel is the label of the averages' window; callers cannot use it.
const windowLabel = "window"

// New returns a collector that exports the pressure of whatever targets returns at each
// scrape. targets is called once per scrape and must be safe for concurrent calls.
func New(opts Options, targets func() []Target) (*Collector, error) {
	seen := map[string]bool{}
	for _, l := range opts.Labels {
		if !validLabel(l) || l == windowLabel || seen[l] {
			return nil, fmt.Errorf("psimetrics: label %q is invalid, reserved or given twice", l)
		}
		seen[l] = true
	}
	c := &Collector{
		opts:    Options{Labels: slices.Clone(opts.Labels), Averages: opts.Averages, Also: opts.Also},
		targets: targets,
		total:   map[series]*prometheus.Desc{},
		ratio:   map[series]*prometheus.Desc{},
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: Prefix + "read_errors_total",
			Help: "Pressure files that could not be read, by resource and reason; their series were left out of that scrape.",
		}, []string{"resource", "reason"}),
	}
	for _, r := range psi.Resources() {
		for _, k := range []psi.Kind{psi.Some, psi.Full} {
			s := series{r, k}
			c.total[s] = prometheus.NewDesc(name(s, "seconds_total"), helpTotal(s), c.opts.Labels, nil)
			c.ratio[s] = prometheus.NewDesc(name(s, "ratio"), helpRatio(s), append(slices.Clone(c.opts.Labels), windowLabel), nil)
		}
		// Every combination from the start: rate() needs a series before its first increase.
		for _, reason := range append(psi.Reasons(), ReasonBadTarget) {
			c.errors.WithLabelValues(string(r), string(reason))
		}
	}
	return c, nil
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.total {
		ch <- d
	}
	if c.opts.Averages {
		for _, d := range c.ratio {
			ch <- d
		}
	}
	c.errors.Describe(ch)
	if c.opts.Also != nil {
		c.opts.Also.Describe(ch)
	}
}

// Collect implements prometheus.Collector: it reads every target's pressure files now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	seen := map[string]bool{}
	for _, t := range c.targets() {
		key := fmt.Sprintf("%q", t.Labels)
		if len(t.Labels) != len(c.opts.Labels) || seen[key] || !allUTF8(t.Labels) {
			for _, r := range psi.Resources() {
				c.errors.WithLabelValues(string(r), string(ReasonBadTarget)).Inc()
			}
			continue
		}
		seen[key] = true
		sample := psi.ReadAll(t.Dir)
		for _, r := range psi.Resources() {
			p, err := sample.Get(r)
			if err != nil {
				c.errors.WithLabelValues(string(r), string(psi.ReasonOf(err))).Inc()
				continue
			}
			c.emit(ch, r, p, t.Labels)
		}
		if c.opts.Also != nil {
			c.opts.Also.Emit(ch, t, sample)
		}
	}
	c.errors.Collect(ch)
}

func (c *Collector) emit(ch chan<- prometheus.Metric, r psi.Resource, p psi.Pressure, labels []string) {
	for _, k := range []psi.Kind{psi.Some, psi.Full} {
		l := p.Line(k)
		if !l.Present {
			continue
		}
		s := series{r, k}
		ch <- prometheus.MustNewConstMetric(c.total[s], prometheus.CounterValue, l.Seconds(), labels...)
		if !c.opts.Averages {
			continue
		}
		for _, w := range []struct {
			window string
			pct    float64
		}{{"10s", l.Avg10}, {"60s", l.Avg60}, {"300s", l.Avg300}} {
			ch <- prometheus.MustNewConstMetric(c.ratio[s], prometheus.GaugeValue, w.pct/100, append(slices.Clone(labels), w.window)...)
		}
	}
}

// word is the metric name's word for a PSI kind: cAdvisor's and the kubelet's.
func word(k psi.Kind) string {
	if k == psi.Full {
		return "stalled"
	}
	return "waiting"
}

func name(s series, suffix string) string {
	return Prefix + string(s.res) + "_" + word(s.kind) + "_" + suffix
}

func helpTotal(s series) string {
	if s.kind == psi.Full {
		return fmt.Sprintf("Total time in seconds all non-idle tasks of the cgroup were stalled on %s at once (PSI full).", s.res)
	}
	return fmt.Sprintf("Total time in seconds at least one task of the cgroup waited for %s (PSI some).", s.res)
}

func helpRatio(s series) string {
	return fmt.Sprintf("The kernel's running average over the window of the share of time counted by %s (0..1).", name(s, "seconds_total"))
}

func allUTF8(vs []string) bool {
	for _, v := range vs {
		if !utf8.ValidString(v) {
			return false
		}
	}
	return true
}

// validLabel is Prometheus's label name syntax, less the reserved "__" prefix.
func validLabel(s string) bool {
	if s == "" || strings.HasPrefix(s, "__") {
		return false
	}
	for i, c := range s {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
