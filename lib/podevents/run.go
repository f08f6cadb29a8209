package podevents

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/kubeapi"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
)

// Poster posts one Event: a *kubeapi.Client.
type Poster interface {
	PostPodEvent(ctx context.Context, e kubeapi.PodEvent) error
}

// Notifier reads the state dir's records and posts the Events they call for.
type Notifier struct {
	stateDir string
	node     string
	poster   Poster
	tracker  *Tracker
	log      *slog.Logger
	now      func() time.Time
	posted   *prometheus.CounterVec
}

// New is the notifier of the node named node (the Events' source host; "" for none), for
// cfg's state dir, failure policy and events.rate.
func New(cfg config.Config, node string, poster Poster, log *slog.Logger) *Notifier {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n := &Notifier{stateDir: cfg.StateDir, node: node, poster: poster, log: log, now: time.Now,
		tracker: NewTracker(cfg.FailurePolicy, cfg.Events.Rate),
		posted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "resctrl_mon_events_posted_total",
			Help: "Kubernetes Events about pods (reason) and what came of each (outcome: posted, exists, rate_limited, failed, invalid).",
		}, []string{"reason", "outcome"}),
	}
	// Every series from the start, so that increase() sees the first Event.
	for _, r := range Reasons {
		for _, o := range Outcomes {
			n.posted.WithLabelValues(string(r), string(o))
		}
	}
	return n
}

// Collector is the notifier's counter, for the exporter's registry.
func (n *Notifier) Collector() prometheus.Collector { return n.posted }

// Run reads the records every interval until ctx ends.
func (n *Notifier) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n.Once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once reads the records and posts what is due. A state dir not there yet (no hook has run)
// or a record that cannot be read is no Event; the exporter's /healthz says why.
func (n *Notifier) Once(ctx context.Context) {
	st, err := registry.OpenReadOnly(n.stateDir)
	if err != nil {
		return
	}
	recs, err := st.List()
	if err != nil {
		n.log.Debug("events: some records could not be read", "err", err)
	}
	for _, d := range n.tracker.Observe(recs, n.now()) {
		o := d.Outcome
		if o == "" {
			o = n.post(ctx, d.Event)
		}
		n.posted.WithLabelValues(string(d.Reason), string(o)).Inc()
		attrs := []any{"reason", d.Reason, "namespace", d.Pod.Namespace, "pod", d.Pod.Name, "group", d.Group, "outcome", o}
		if o == Invalid {
			attrs = append(attrs, "err", ValidPod(d.Pod))
		}
		n.log.Info("event", attrs...)
	}
}

func (n *Notifier) post(ctx context.Context, e Event) Outcome {
	ctx, cancel := context.WithTimeout(ctx, kubeapi.Timeout)
	defer cancel()
	err := n.poster.PostPodEvent(ctx, kubeapi.PodEvent{Pod: e.Pod, Reason: string(e.Reason), Type: e.Reason.Type(),
		Message: e.Message, Node: n.node, Time: n.now()})
	switch {
	case err == nil:
		return Posted
	case errors.Is(err, kubeapi.ErrEventExists):
		return Exists
	}
	n.log.Warn("event not posted", "reason", e.Reason, "namespace", e.Pod.Namespace, "pod", e.Pod.Name, "err", err)
	return Failed
}
