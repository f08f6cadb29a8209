package nriplugin

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/budget"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// DefaultStuckAfter is how long an event's work may go on past its budget before the
// adapter calls itself stuck (Live fails, and its supervisor restarts it). A resctrl write
// or a pod's lock that slow is a hang: a restart frees the workers it holds, and the
// Synchronize that follows repairs what the stuck work left undone.
const DefaultStuckAfter = time.Minute

// health is what the adapter says of itself, for its metrics and probes: its events by kind
// and outcome, the work of the events still going on, its connection to the runtime and its
// last Synchronize. An event touches it twice, each under one short lock: nothing here
// waits on resctrl, a pod's lock or a scrape.
type health struct {
	mu         sync.Mutex
	events     map[[2]string]uint64 // {event, outcome} -> count
	flights    map[uint64]flight    // the work of events going on
	next       uint64
	connected  bool
	synced     time.Time // the end of the last Synchronize's work
	stuckAfter time.Duration
	now        func() time.Time
}

// flight is the work of one event going on.
type flight struct {
	event  string
	start  time.Time
	budget time.Duration
}

// newHealth starts the outcomes an alert watches at 0 for every event, so that increase()
// sees their first one.
func newHealth() *health {
	h := &health{events: map[[2]string]uint64{}, flights: map[uint64]flight{}, stuckAfter: DefaultStuckAfter, now: time.Now}
	for _, ev := range []string{"Synchronize", "StartContainer", "PostStartContainer", "StopContainer", "RemoveContainer", "RemovePodSandbox"} {
		for _, o := range []string{string(vocab.Failed), outcomePastBudget, outcomeNotStarted} {
			h.events[[2]string{ev, o}] = 0
		}
	}
	return h
}

// Outcomes of an event beside lifecycle's actions (vocab.Actions).
const (
	outcomePastBudget = "past-budget" // answered at its budget; the work goes on
	outcomeNotStarted = "not-started" // every worker busy: nothing done
	outcomeDeferred   = "deferred"    // no process yet: PostStartContainer places it
	outcomeOK         = "ok"          // Synchronize done within its budget
)

func (h *health) count(event, outcome string) {
	h.mu.Lock()
	h.events[[2]string{event, outcome}]++
	h.mu.Unlock()
}

func (h *health) begin(event string, d time.Duration) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	h.flights[h.next] = flight{event: event, start: h.now(), budget: d}
	return h.next
}

func (h *health) end(id uint64) {
	h.mu.Lock()
	delete(h.flights, id)
	h.mu.Unlock()
}

func (h *health) setConnected(c bool) {
	h.mu.Lock()
	h.connected = c
	h.mu.Unlock()
}

func (h *health) synchronized() {
	h.mu.Lock()
	h.synced = h.now()
	h.mu.Unlock()
}

// late lists the work going on past its budget, the oldest first, and whether any of it is
// past stuckAfter too.
func (h *health) late() (late []string, stuck bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	var fs []flight
	for _, f := range h.flights {
		if now.Sub(f.start) > f.budget {
			fs = append(fs, f)
		}
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].start.Before(fs[j].start) })
	for _, f := range fs {
		over := now.Sub(f.start) - f.budget
		stuck = stuck || over > h.stuckAfter
		late = append(late, fmt.Sprintf("%s's work %s past its %s budget", f.event, over.Round(time.Millisecond), f.budget))
	}
	return late, stuck
}

// Live is the adapter's liveness: an error when an event's work has gone on past its budget
// by more than the stuck limit (resctrl or a pod's lock hangs), which a restart clears. The
// runtime closing the connection ends the adapter by itself (Run returns ErrRuntimeGone).
func (p *Plugin) Live() error {
	late, stuck := p.health.late()
	if stuck {
		return fmt.Errorf("stuck: %s (more than %s past its budget)", late[0], p.health.stuckAfter)
	}
	return nil
}

// Ready is the adapter's readiness: connected to the runtime, synchronised with it once, and
// keeping up (no event's work past its budget, a worker free for the next event).
func (p *Plugin) Ready() error {
	h := p.health
	h.mu.Lock()
	connected, synced := h.connected, h.synced
	h.mu.Unlock()
	var errs []error
	if !connected {
		errs = append(errs, errors.New("not connected to the runtime's NRI socket"))
	} else if synced.IsZero() {
		errs = append(errs, errors.New("connected, not synchronised yet"))
	}
	if late, _ := h.late(); len(late) > 0 {
		errs = append(errs, fmt.Errorf("not keeping up: %s", late[0]))
	}
	if p.workers.Busy() >= p.workers.Max() {
		errs = append(errs, fmt.Errorf("all %d workers busy", p.workers.Max()))
	}
	return errors.Join(errs...)
}

// SetStuckAfter changes how long past its budget an event's work may go on before Live fails
// (DefaultStuckAfter).
func (p *Plugin) SetStuckAfter(d time.Duration) {
	p.health.mu.Lock()
	p.health.stuckAfter = d
	p.health.mu.Unlock()
}

// The adapter's own metrics.
var (
	eventsDesc = prometheus.NewDesc("resctrl_mon_nri_events_total",
		"NRI events the adapter handled, by event and outcome (lifecycle's action, or past-budget, not-started, deferred, ok).",
		[]string{"event", "outcome"}, nil)
	workersDesc = prometheus.NewDesc("resctrl_mon_nri_workers_busy",
		"The adapter's workers doing an event's work now; one beside an event means earlier work overran its budget.", nil, nil)
	workersMaxDesc = prometheus.NewDesc("resctrl_mon_nri_workers_max",
		"The adapter's workers at most: with all busy, an event is answered at once and not started.", nil, nil)
	oldestDesc = prometheus.NewDesc("resctrl_mon_nri_oldest_work_seconds",
		"How long the oldest event's work going on has run (0 when none).", nil, nil)
	connectedDesc = prometheus.NewDesc("resctrl_mon_nri_connected",
		"1 while the adapter is registered with the runtime's NRI socket.", nil, nil)
	syncedDesc = prometheus.NewDesc("resctrl_mon_nri_last_synchronize_timestamp_seconds",
		"When the last Synchronize's work ended (Unix time; 0 before the first).", nil, nil)
)

// Collector is the adapter's own metrics (see the descriptions above), for a registry that
// serves them.
func (p *Plugin) Collector() prometheus.Collector { return (*healthCollector)(p) }

type healthCollector Plugin

func (c *healthCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{eventsDesc, workersDesc, workersMaxDesc, oldestDesc, connectedDesc, syncedDesc} {
		ch <- d
	}
}

func (c *healthCollector) Collect(ch chan<- prometheus.Metric) {
	h := c.health
	h.mu.Lock()
	now := h.now()
	oldest := 0.0
	for _, f := range h.flights {
		oldest = max(oldest, now.Sub(f.start).Seconds())
	}
	for k, n := range h.events {
		ch <- prometheus.MustNewConstMetric(eventsDesc, prometheus.CounterValue, float64(n), k[0], k[1])
	}
	connected, synced := 0.0, 0.0
	if h.connected {
		connected = 1
	}
	if !h.synced.IsZero() {
		synced = float64(h.synced.UnixNano()) / 1e9
	}
	h.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(workersDesc, prometheus.GaugeValue, float64(c.workers.Busy()))
	ch <- prometheus.MustNewConstMetric(workersMaxDesc, prometheus.GaugeValue, float64(c.workers.Max()))
	ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, oldest)
	ch <- prometheus.MustNewConstMetric(connectedDesc, prometheus.GaugeValue, connected)
	ch <- prometheus.MustNewConstMetric(syncedDesc, prometheus.GaugeValue, synced)
}

// run is within for one event: its work is tracked while it goes on (Live, Ready, the
// metrics), also past the budget.
func run[T any](p *Plugin, event string, d time.Duration, work func() T) (T, error) {
	id := p.health.begin(event, d)
	v, err := within(p.workers, d, func() T {
		defer p.health.end(id)
		return work()
	})
	if errors.Is(err, budget.ErrNotStarted) {
		p.health.end(id)
	}
	return v, err
}
