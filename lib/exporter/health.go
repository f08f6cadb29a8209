package exporter

import (
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/lib/state"
)

// ReasonOther labels a failure whose reason resctrl-mon does not list (a newer writer).
const ReasonOther = "other"

func failureReasons() []string {
	out := make([]string, 0, len(lifecycle.FailureReasons)+1)
	for _, r := range lifecycle.FailureReasons {
		out = append(out, string(r))
	}
	return append(out, ReasonOther)
}

// failureCursor is how far the failures log has been counted: the newest time seen and how
// many lines carry exactly that time (writers stamp to the nanosecond, but two can tie).
type failureCursor struct {
	started bool
	at      time.Time
	n       int
}

// next returns the failures after the cursor and moves it past them. The log is appended
// to in time order; a line stamped before the cursor but written after it was read is not
// counted (two hooks racing by nanoseconds).
func (fc *failureCursor) next(fs []state.Failure) []state.Failure {
	var out []state.Failure
	atCursor := 0
	for _, f := range fs {
		switch {
		case fc.started && f.Time.Before(fc.at):
			continue
		case fc.started && f.Time.Equal(fc.at):
			atCursor++
			if atCursor <= fc.n {
				continue
			}
		}
		out = append(out, f)
	}
	for _, f := range out {
		switch {
		case !fc.started || f.Time.After(fc.at):
			fc.started, fc.at, fc.n = true, f.Time, 1
		case f.Time.Equal(fc.at):
			fc.n++
		}
	}
	fc.started = true
	return out
}

// collectHealth exports RMID use, the failures log and the snapshots present.
func (c *Collector) collectHealth(ch chan<- prometheus.Metric) {
	if r, err := c.src.RMIDs(); err != nil {
		c.sourceError(SourceRMIDs, err)
	} else {
		c.emit(ch, c.rmidsUsed, prometheus.GaugeValue, float64(r.Used))
		c.emit(ch, c.rmidsTotal, prometheus.GaugeValue, float64(r.Total))
	}
	// The first scrape counts the log's whole history (a first sample, which rate() does
	// not count as an increase); later ones only what is new.
	var since time.Time
	if c.failSeen.started {
		since = c.failSeen.at
	}
	fs, err := c.src.Failures(since)
	if err != nil {
		c.sourceError(SourceFailures, err)
	}
	known := failureReasons()
	for _, f := range c.failSeen.next(fs) {
		reason := f.Reason
		if !slices.Contains(known, reason) {
			reason = ReasonOther
		}
		c.failures.WithLabelValues(reason).Inc()
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
	for _, s := range lifecycle.Sources {
		for _, a := range lifecycle.Actions {
			c.emit(ch, c.outcomes, prometheus.CounterValue, float64(counts[lifecycle.OutcomeCount(s, a)]), string(s), string(a))
		}
	}
	for _, k := range []snapshot.Kind{snapshot.Begin, snapshot.End} {
		c.emit(ch, c.snapshotsWritten, prometheus.CounterValue, float64(counts[lifecycle.SnapshotCount(k)]), string(k))
	}
}
