package exporter

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// Causes of an absorbed counter reading, the label of resctrl_mon_counter_resets_total.
const (
	// CauseDecrease: a reading lower than the last one in the same life of the group.
	CauseDecrease = "decrease"
	// CauseNewLife: the group was re-made (a new RMID): its series start from a new baseline.
	CauseNewLife = "new_life"
)

// ReasonDomain: a mon_data directory whose name is not mon_<resource>_<id>.
const ReasonDomain = "domain"

// ReadErrorReasons label resctrl_mon_counter_read_errors_total: the kernel's words for "no
// sample", and resctrlfs's for a file that could not be read or parsed.
var ReadErrorReasons = []string{"Unavailable", "Error", "Unassigned", resctrlfs.ReasonUnreadable, resctrlfs.ReasonMalformed, ReasonDomain}

// groupTrack is what the collector remembers of one group: the life it last read, and per
// series the last raw reading and what it exported.
type groupTrack struct {
	life   time.Time
	series map[seriesKey]*track
}

type seriesKey struct{ domain, counter string }

type track struct {
	raw, out float64
	rebase   bool // the group began a new life: the next reading is a baseline
}

// advance takes a cumulative counter's new raw reading and returns the value to export:
// the package doc's "counters never step backwards".
func (c *Collector) advance(p inventory.Pod, domain, counter string, raw float64) float64 {
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
	k := seriesKey{domain, counter}
	t := g.series[k]
	switch {
	case t == nil:
		t = &track{raw: raw}
		g.series[k] = t
	case t.rebase:
		c.resets.WithLabelValues(CauseNewLife).Inc()
		t.raw, t.rebase = raw, false
	case raw < t.raw:
		c.resets.WithLabelValues(CauseDecrease).Inc()
		t.raw = raw
	default:
		t.out += raw - t.raw
		t.raw = raw
	}
	return t.out
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

// collectCounters exports one group's readings and counts the counters that gave none.
func (c *Collector) collectCounters(ch chan<- prometheus.Metric, p inventory.Pod) {
	for _, m := range p.Missing {
		c.readErrors.WithLabelValues(m.Reason).Inc()
	}
	exists := p.State != inventory.Pending && p.State != inventory.Missing
	if exists && len(p.Readings) == 0 && len(p.Missing) == 0 {
		// The group is there but its mon_data could not be listed.
		c.readErrors.WithLabelValues(resctrlfs.ReasonUnreadable).Inc()
	}
	for _, r := range p.Readings {
		res, id, err := resctrlfs.DomainID(r.Domain)
		if err != nil {
			c.readErrors.WithLabelValues(ReasonDomain).Inc()
			continue
		}
		m, known := c.counters[r.Name]
		if !known {
			c.emit(ch, c.other, prometheus.GaugeValue, r.Value, p.PodUID, p.Namespace, p.PodName, p.Path, p.Class, res, id, r.Name)
			continue
		}
		v, t := r.Value, prometheus.GaugeValue
		if m.cumulative {
			v, t = c.advance(p, r.Domain, r.Name, r.Value), prometheus.CounterValue
		}
		c.emit(ch, m.desc, t, v*m.scale, p.PodUID, p.Namespace, p.PodName, p.Path, p.Class, res, id)
	}
}
