package nriplugin

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/budget"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// ErrBudget: an event's work outlived the time the runtime can be kept waiting. It is
// budget.ErrExhausted, the one error of every front end's budget.
var ErrBudget = budget.ErrExhausted

// ErrNotStarted: an event found every worker busy with earlier events that overran their
// budget (resctrl, or a pod's lock, hangs), so its work was not started at all. It wraps
// ErrBudget: the runtime gets the same answer as for an event past its budget, at once.
var ErrNotStarted = budget.ErrNotStarted

// Past its request timeout (2 s by default) the runtime drops the plugin, and a
// StartContainer that timed out fails the container whatever the failure policy. The adapter
// answers before: within the config's hookBudget, and at least budgetMargin under the
// runtime's timeout.
const (
	budgetMargin = 500 * time.Millisecond
	minBudget    = 100 * time.Millisecond
	// defaultRequestTimeout is NRI's, until the runtime says its own at Configure.
	defaultRequestTimeout = 2 * time.Second
)

// requestTimeouts holds where the runtime's request timeout can be read (the stub learns
// it at Configure).
type requestTimeouts struct {
	mu sync.Mutex
	f  func() time.Duration
}

func (r *requestTimeouts) set(f func() time.Duration) {
	r.mu.Lock()
	r.f = f
	r.mu.Unlock()
}

func (r *requestTimeouts) get() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return defaultRequestTimeout
	}
	if d := r.f(); d > 0 {
		return d
	}
	return defaultRequestTimeout
}

// eventBudget is how long one event may keep the runtime waiting: hookBudget, at least
// budgetMargin under the runtime's request timeout, and never under minBudget.
func eventBudget(cfg config.Config, requestTimeout time.Duration) time.Duration {
	return budget.Under(time.Duration(cfg.HookBudget), requestTimeout-budgetMargin, minBudget)
}

// within runs work on one of w's workers and waits for it at most d (budget.Run), saying
// what its errors mean for an event. err is nil when work ended in time. Past d, work goes
// on in the background (what it changes is recorded under the pod's lock before any resctrl
// call, so a later event, the next Synchronize or reconcile finds it) and err wraps
// ErrBudget. When every worker is busy, work is not started at all and err wraps
// ErrNotStarted, at once: the caller says what was not done.
func within[T any](w *budget.Pool, d time.Duration, work func() T) (T, error) {
	v, err := budget.Run(w, d, work)
	switch {
	case errors.Is(err, budget.ErrNotStarted):
		return v, fmt.Errorf("%w: all %d of the adapter's workers are busy with earlier events (resctrl or a pod's lock hangs)", ErrNotStarted, w.Max())
	case err != nil:
		return v, fmt.Errorf("%w: %s passed; the work goes on in the background", ErrBudget, d)
	}
	return v, nil
}

// overBudget is the error of an event whose work within did not see end (late, its error):
// inBackground says what becomes of work going on, notDone what is left undone, and what
// catches up, for work never started. Work never started is counted as the adapter's
// failed outcome: the lifecycle call that counts every other event never ran.
func overBudget(m *lifecycle.Manager, late error, inBackground, notDone string) error {
	if !errors.Is(late, ErrNotStarted) {
		return fmt.Errorf("%w: %s", late, inBackground)
	}
	err := fmt.Errorf("%w; NOT done: %s", late, notDone)
	if m != nil {
		if cerr := m.Store().Count(vocab.OutcomeCount(vocab.SourceAdapter, vocab.Failed)); cerr != nil {
			err = errors.Join(err, fmt.Errorf("counting the event: %w", cerr))
		}
	}
	return err
}

// notPlaced says what becomes of a container whose placement was never started, v being
// what the failure policy makes of that.
func notPlaced(event string, v config.Verdict) string {
	switch {
	case event != "StartContainer":
		return "the container runs unplaced until the next Synchronize (the adapter's restart) places it, late"
	case v == config.Refuse:
		return "the container was not placed, and is refused"
	}
	return "the container starts unplaced; its PostStartContainer places it late if a worker is free by then, " +
		"else the next Synchronize (the adapter's restart)"
}

// notLeft says what catches up a departure that was never started.
func notLeft(event string) string {
	if event == "StopContainer" {
		return "the container has not left its pod's group; its RemoveContainer leaves it"
	}
	return "the container has not left its pod's group; the pod's RemovePodSandbox ends the group, or else the next Synchronize"
}

// notDoneLevel is the level of an event's log line: a warning when its work was never
// started, which an operator must see, else the usual info.
func notDoneLevel(err error) slog.Level {
	if errors.Is(err, ErrNotStarted) {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}
