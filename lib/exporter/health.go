package exporter

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// ReasonOther labels a failure whose reason resctrl-mon does not list (a newer writer).
const ReasonOther = "other"

func failureReasons() []string {
	out := make([]string, 0, len(vocab.FailureReasons)+1)
	for _, r := range vocab.FailureReasons {
		out = append(out, string(r))
	}
	return append(out, ReasonOther)
}

// collectHealth exports RMID use, the counts and the snapshots present.
func (c *Collector) collectHealth(ch chan<- prometheus.Metric) {
	if r, err := c.src.RMIDs(); err != nil {
		c.sourceError(SourceRMIDs, err)
	} else {
		c.emit(ch, c.rmidsUsed, prometheus.GaugeValue, float64(r.Used))
		c.emit(ch, c.rmidsTotal, prometheus.GaugeValue, float64(r.Total))
	}
	c.collectCounts(ch)
	if c.opts.SnapshotDir != "" {
		names, err := snapshot.List(c.opts.SnapshotDir)
		if err != nil {
			c.sourceError(SourceSnapshots, err)
		} else {
			n := map[snapshot.Kind]int{}
			for _, s := range names {
				n[s.Kind]++
			}
			for _, k := range []snapshot.Kind{snapshot.Begin, snapshot.End} {
				c.emit(ch, c.snapshots, prometheus.GaugeValue, float64(n[k]), string(k))
			}
		}
	}
	avail := 0.0
	if c.psi != nil {
		avail = 1
	}
	c.emit(ch, c.psiAvailable, prometheus.GaugeValue, avail)
}

// collectCounts exports what the front ends counted in the state dir. Every source and
// action is exported from the start (rate() needs a series before its first increase); a
// name this version does not know (a newer writer) is left out.
func (c *Collector) collectCounts(ch chan<- prometheus.Metric) {
	counts, err := c.src.Counts()
	if err != nil {
		c.sourceError(SourceCounts, err)
		if counts == nil {
			return
		}
	}
	for _, s := range vocab.Sources {
		for _, a := range vocab.Actions {
			c.emit(ch, c.outcomes, prometheus.CounterValue, float64(counts[vocab.OutcomeCount(s, a)]), string(s), string(a))
		}
	}
	for _, k := range []snapshot.Kind{snapshot.Begin, snapshot.End} {
		c.emit(ch, c.snapshotsWritten, prometheus.CounterValue, float64(counts[vocab.SnapshotCount(k)]), string(k))
	}
	// Failures by reason; a reason this version does not know (a newer writer) is "other".
	byReason := map[string]uint64{}
	for _, r := range failureReasons() {
		byReason[r] = 0
	}
	for name, n := range counts {
		r, ok := strings.CutPrefix(name, vocab.FailurePrefix)
		if !ok {
			continue
		}
		if _, known := byReason[r]; !known || r == ReasonOther {
			r = ReasonOther
		}
		byReason[r] += n
	}
	for r, n := range byReason {
		c.emit(ch, c.failures, prometheus.CounterValue, float64(n), r)
	}
}
