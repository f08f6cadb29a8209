package nriplugin

import (
	"errors"
	"sync"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
)

// ErrBudget: an event's work outlived the time the runtime can be kept waiting.
var ErrBudget = errors.New("time budget exhausted")

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

// budget is how long one event may keep the runtime waiting.
func budget(cfg config.Config, requestTimeout time.Duration) time.Duration {
	b := time.Duration(cfg.HookBudget)
	if limit := requestTimeout - budgetMargin; b <= 0 || b > limit {
		b = limit
	}
	return max(b, minBudget)
}

// within runs work on one of w's goroutines and waits for it at most d. Past d it goes on in
// the background (what it changes is recorded under the pod's lock before any resctrl call,
// so a later event, the next Synchronize or reconcile finds it) and ok is false.
func within[T any](w *workers, d time.Duration, work func() T) (v T, ok bool) {
	res := make(chan T, 1) // buffered: a late result is dropped, not blocked on
	w.run(func() { res <- work() })
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case v = <-res:
		return v, true
	case <-t.C:
		return v, false
	}
}

// workers are the goroutines that do the events' work. One that has finished waits a while
// for the next event, keeping the stack it grew through the library's calls: an event handed
// to it costs one wake-up, where a goroutine started per event cost this adapter 60-140 µs
// per event on these VMs (its stack grown anew, another thread woken to run it), against
// 40-50 µs. A worker still busy (a slow resctrl) is simply not idle: the next event gets a
// new one.
type workers struct{ idle chan func() }

// workerIdle is how long a worker waits for work before it ends.
const workerIdle = time.Minute

func newWorkers() workers { return workers{idle: make(chan func())} }

// run hands job to an idle worker, or to a new one.
func (w *workers) run(job func()) {
	select {
	case w.idle <- job:
	default:
		go w.loop(job)
	}
}

func (w *workers) loop(job func()) {
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		job()
		t.Reset(workerIdle)
		select {
		case job = <-w.idle:
		case <-t.C:
			return
		}
	}
}
