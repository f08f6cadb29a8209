package exporter

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// Causes of an absorbed counter reading, the label of resctrl_mon_mon_data_resets_total.
const (
	// CauseDecrease: a reading lower than the last one in the same life of the group.
	CauseDecrease = "decrease"
	// CauseNewLife: the group was re-made (a new RMID): its series start from a new baseline.
	CauseNewLife = "new_life"
	// CauseAssignment: a bandwidth counter read Unassigned, then a number: the kernel assigned
	// it a hardware counter, which counts from zero (Linux ≥ 6.18 mbm_event mode), so the
	// whole reading is new traffic.
	CauseAssignment = "assignment"
)

// ResetCauses are every cause of resctrl_mon_mon_data_resets_total, each exported from the
// first scrape.
var ResetCauses = []string{CauseDecrease, CauseNewLife, CauseAssignment}

// ReasonDomain: a mon_data directory whose name is not mon_<resource>_<id>.
const ReasonDomain = "domain"

// ReadErrorReasons label resctrl_mon_mon_data_read_errors_total: the kernel's words for "no
// sample", and resctrlfs's for a file that could not be read or parsed. "Unassigned" is not
// one: it is the state of a counter in mbm_event mode (resctrl_mon_mbm_assigned), not a
// failed read.
var ReadErrorReasons = []string{"Unavailable", "Error", resctrlfs.ReasonUnreadable, resctrlfs.ReasonMalformed, ReasonDomain}

// unassigned is the kernel's word for a bandwidth counter without a hardware counter.
const unassigned = "Unassigned"

// groupTrack is what the collector remembers of one group: the life it last read, and per
// series the last raw reading and what it exported.
type groupTrack struct {
	life   time.Time
	series map[seriesKey]*track
}

type seriesKey struct{ domain, sub, counter string }

type track struct {
	raw, out float64
	rebase   bool // the group began a new life: the next reading is a baseline
	fresh    bool // the counter read Unassigned: the next reading counts from zero
}

// advance takes a cumulative counter's new raw reading and returns the value to export:
// the package doc's "counters never step backwards".
func (c *Collector) advance(p inventory.Pod, k seriesKey, raw float64) float64 {
	t, created := c.track(p, k, raw)
	switch {
	case t.rebase:
		c.resets.WithLabelValues(CauseNewLife).Inc()
		t.raw, t.rebase, t.fresh = raw, false, false
	case t.fresh:
		c.resets.WithLabelValues(CauseAssignment).Inc()
		t.out += raw
		t.raw, t.fresh = raw, false
	case created:
	case raw < t.raw:
		c.resets.WithLabelValues(CauseDecrease).Inc()
		t.raw = raw
	default:
		t.out += raw - t.raw
		t.raw = raw
	}
	return t.out
}

// unassign notes that a counter read Unassigned: when the kernel assigns it a counter, that
// counter starts from zero.
func (c *Collector) unassign(p inventory.Pod, k seriesKey) {
	t, _ := c.track(p, k, 0)
	// Even in a new life: what the new counter reads is all new traffic.
	t.fresh, t.rebase = true, false
}

// track returns a series' track, made with raw as its baseline if it had none.
func (c *Collector) track(p inventory.Pod, k seriesKey, raw float64) (*track, bool) {
	g := c.tracks[p.Path]
	if g == nil {
		g = &groupTrack{life: p.Created, series: map[seriesKey]*track{}}
		c.tracks[p.Path] = g
	}
	if !g.life.Equal(p.Created) {
		g.life = p.Created
		for _, t := range g.series {
			t.rebase = true
		}
	}
	if t := g.series[k]; t != nil {
		return t, false
	}
	t := &track{raw: raw}
	g.series[k] = t
	return t, true
}

// prune forgets the groups that are no longer in the registry: the collector's memory is
// bounded by the registry's.
func (c *Collector) prune(live map[string]bool) {
	for path := range c.tracks {
		if !live[path] {
			delete(c.tracks, path)
		}
	}
}

// collectCounters exports one group's readings and counts the counters that gave none. In
// mbm_event mode (counting) it says for each bandwidth counter whether the kernel counts it.
func (c *Collector) collectCounters(ch chan<- prometheus.Metric, p inventory.Pod, counting bool) {
	for _, m := range p.Missing {
		if m.Reason != unassigned {
			c.readErrors.WithLabelValues(m.Reason).Inc()
			continue
		}
		if cum, _ := resctrlfs.CounterMeta(m.Name); cum {
			c.unassign(p, seriesKey{m.Domain, m.Sub, m.Name})
		}
		if res, id, err := resctrlfs.DomainID(m.Domain); err == nil && m.Sub == "" && counting && assignable(m.Name) {
			c.emit(ch, c.mbmAssigned, prometheus.GaugeValue, 0, p.PodUID, p.Namespace, p.PodName, p.Path, p.Class, res, id, m.Name)
		}
	}
	exists := p.State != inventory.Pending && p.State != inventory.Missing
	if exists && len(p.Readings) == 0 && len(p.Missing) == 0 {
		// The group is there but its mon_data could not be listed.
		c.readErrors.WithLabelValues(resctrlfs.ReasonUnreadable).Inc()
	}
	for _, r := range p.Readings {
		res, id, sub, err := domainLabels(r.Domain, r.Sub)
		if err != nil {
			c.readErrors.WithLabelValues(ReasonDomain).Inc()
			continue
		}
		if r.Sub != "" {
			c.collectNode(ch, p, r, res, id, sub)
			continue
		}
		m, known := c.counters[r.Name]
		if !known {
			c.emit(ch, c.other, prometheus.GaugeValue, r.Value, p.PodUID, p.Namespace, p.PodName, p.Path, p.Class, res, id, r.Name)
			continue
		}
		if counting && assignable(r.Name) {
			c.emit(ch, c.mbmAssigned, prometheus.GaugeValue, 1, p.PodUID, p.Namespace, p.PodName, p.Path, p.Class, res, id, r.Name)
		}
		v, t := r.Value, prometheus.GaugeValue
		if m.cumulative {
			v, t = c.advance(p, seriesKey{r.Domain, r.Sub, r.Name}, r.Value), prometheus.CounterValue
		}
		c.emit(ch, m.desc, t, v*m.scale, p.PodUID, p.Namespace, p.PodName, p.Path, p.Class, res, id)
	}
}

// collectNode exports one SNC node's reading in its own family (nodePrefix). A file the
// kernel adds to a node's directory that resctrl-mon does not know is left out: the
// cache's own file of that name is exported (resctrl_mon_counter) and sums the nodes.
func (c *Collector) collectNode(ch chan<- prometheus.Metric, p inventory.Pod, r resctrlfs.Reading, res, id, sub string) {
	m, known := c.nodeCounters[r.Name]
	if !known {
		return
	}
	v, t := r.Value, prometheus.GaugeValue
	if m.cumulative {
		v, t = c.advance(p, seriesKey{r.Domain, r.Sub, r.Name}, r.Value), prometheus.CounterValue
	}
	c.emit(ch, m.desc, t, v*m.scale, p.PodUID, p.Namespace, p.PodName, p.Path, p.Class, res, id, sub)
}

// domainLabels are the resource, domain and subdomain labels of a counter file in
// mon_data/domain[/sub]: subdomain is the SNC node's id, "" for the domain's own file.
func domainLabels(domain, sub string) (resource, id, subID string, err error) {
	resource, id, err = resctrlfs.DomainID(domain)
	if err != nil || sub == "" {
		return resource, id, "", err
	}
	subRes, subID, err := resctrlfs.SubdomainID(sub)
	if err == nil && subRes != resource {
		err = fmt.Errorf("mon_data node %s/%s: another resource than its domain's", domain, sub)
	}
	return resource, id, subID, err
}

// assignable reports whether a counter needs an assigned hardware counter in mbm_event mode.
func assignable(counter string) bool {
	return counter == resctrlfs.MBMTotal || counter == resctrlfs.MBMLocal
}

// collectAssignment exports the node's bandwidth counters in mbm_event mode.
func (c *Collector) collectAssignment(ch chan<- prometheus.Metric, a resctrlfs.Assignment) {
	if !a.Counting() {
		return
	}
	for id, n := range a.Counters {
		c.emit(ch, c.mbmCounters, prometheus.GaugeValue, float64(n), "L3", id)
	}
	for id, n := range a.Available {
		c.emit(ch, c.mbmAvailable, prometheus.GaugeValue, float64(n), "L3", id)
	}
}
