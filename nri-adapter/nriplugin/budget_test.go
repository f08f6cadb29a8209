package nriplugin

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/budget"
)

// within returns the work's result in time, gives up past its budget while the work goes
// on, runs other work meanwhile, and events one after another reuse one worker.
func TestWithin(t *testing.T) {
	t.Parallel()
	w := newWorkers()
	if v, err := within(w, time.Second, func() int { return 7 }); v != 7 || err != nil {
		t.Fatalf("got %d, %v", v, err)
	}
	release, finished := make(chan struct{}), atomic.Bool{}
	_, err := within(w, 20*time.Millisecond, func() int { <-release; finished.Store(true); return 1 })
	if !errors.Is(err, ErrBudget) || errors.Is(err, ErrNotStarted) {
		t.Fatalf("a stuck job: %v, want past its budget, going on", err)
	}
	// The stuck job holds its worker: the next one gets another, and answers.
	if v, err := within(w, time.Second, func() int { return 8 }); v != 8 || err != nil {
		t.Errorf("while another job is stuck: %d, %v", v, err)
	}
	close(release)
	if err := pollFor(5*time.Second, finished.Load); err != nil {
		t.Errorf("the job past its budget did not go on to its end: %v", err)
	}
	for i := range 50 {
		if v, err := within(w, time.Second, func() int { return i }); v != i || err != nil {
			t.Fatalf("job %d: %d, %v", i, v, err)
		}
	}
	// The two workers so far (the stuck job's, and the one beside it) take them all.
	live := w.Live()
	if live > 2 {
		t.Errorf("%d workers after 50 jobs one after another, want 2 at most", live)
	}
}

// While resctrl hangs every event overruns its budget: the work of the first maxWorkers goes
// on in the background, and every later event is answered at once, not started, so the
// goroutines stay bounded however long the hang lasts.
// Once the hang ends every started work ends, and the idle workers end too.
func TestWorkersBounded(t *testing.T) {
	t.Parallel()
	const limit, events = 8, 500
	w := budget.NewPool(limit, 10*time.Millisecond)
	release := make(chan struct{})
	var started, finished atomic.Int64
	before := runtime.NumGoroutine()
	background, notStarted := 0, 0
	for range events {
		_, err := within(w, time.Millisecond, func() int {
			started.Add(1)
			<-release
			finished.Add(1)
			return 0
		})
		switch {
		case errors.Is(err, ErrNotStarted):
			notStarted++
		case errors.Is(err, ErrBudget):
			background++
		default:
			t.Fatalf("a job that hangs: %v", err)
		}
	}
	grown, busy := runtime.NumGoroutine()-before, w.Busy()
	live := w.Live()
	// Other tests run meanwhile and start goroutines too: the workers' own count is the bound,
	// and runtime.NumGoroutine is only logged.
	t.Logf("%d events while the work hangs: %d go on in the background, %d not started; %d workers, %d busy; %d more goroutines",
		events, background, notStarted, live, busy, grown)
	if background != limit || notStarted != events-limit || busy != limit || live != limit {
		t.Errorf("%d in the background, %d not started, %d workers, %d busy; want %d, %d, %d, %d",
			background, notStarted, live, busy, limit, events-limit, limit, limit)
	}
	close(release)
	if err := pollFor(5*time.Second, func() bool { return finished.Load() == int64(limit) }); err != nil {
		t.Errorf("%d of %d started jobs ended once the hang did: %v", finished.Load(), limit, err)
	}
	if started.Load() != int64(limit) {
		t.Errorf("%d jobs started, want %d: a refused event's work ran", started.Load(), limit)
	}
	if err := pollFor(5*time.Second, func() bool { return w.Live() == 0 }); err != nil {
		t.Errorf("the idle workers did not end: %v", err)
	}
	// And the workers take work again.
	if v, err := within(w, time.Second, func() int { return 3 }); v != 3 || err != nil {
		t.Errorf("after the hang: %d, %v", v, err)
	}
}

// An event is refused only when every worker is inside a job: one that has just finished is
// idle at once. Concurrent events and workers ending on their idle timer never lose a job
// nor run more than max at once.
func TestWorkersNeverLoseAJob(t *testing.T) {
	t.Parallel()
	const limit = 4
	w := budget.NewPool(limit, time.Microsecond) // workers end as soon as they can: the race with run
	var running, most, done atomic.Int64
	var wg sync.WaitGroup
	for g := range limit {
		wg.Go(func() {
			for i := range 2000 {
				v, err := within(w, time.Minute, func() int {
					n := running.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					running.Add(-1)
					return g*10000 + i
				})
				if err != nil || v != g*10000+i {
					t.Errorf("caller %d, job %d: %d, %v (only %d callers, %d workers)", g, i, v, err, limit, limit)
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	if most.Load() > limit {
		t.Errorf("%d jobs ran at once, want at most %d", most.Load(), limit)
	}
	t.Logf("%d jobs, at most %d at once", done.Load(), most.Load())
}

// What an event says when its work was not started: NOT done, and what catches up; and
// work going on in the background is told apart.
func TestOverBudgetSays(t *testing.T) {
	t.Parallel()
	bg := overBudget(nil, fmt.Errorf("%w: 1s passed; the work goes on in the background", ErrBudget), "the departure goes on", "not left")
	if errors.Is(bg, ErrNotStarted) || !errors.Is(bg, ErrBudget) {
		t.Errorf("in the background: %v", bg)
	}
	ns := overBudget(nil, fmt.Errorf("%w: all 16 busy", ErrNotStarted), "the departure goes on", notLeft("StopContainer"))
	if !errors.Is(ns, ErrNotStarted) || !errors.Is(ns, ErrBudget) {
		t.Errorf("not started: %v", ns)
	}
	for _, want := range []string{"not started", "NOT done", "RemoveContainer leaves it"} {
		if !strings.Contains(ns.Error(), want) {
			t.Errorf("%q does not say %q", ns, want)
		}
	}
}
