package nriplugin

import (
	"slices"
	"sync"
	"time"
)

// maxWorkers bounds the workers, busy or idle. NRI's runtime side sends one event at a time
// (it holds one lock across each event, for all its plugins), so a second busy worker means
// an earlier event overran its budget and its work still waits on resctrl or a pod's lock.
// 16 lets a burst of slow events (a node starting many pods while resctrl is slow, each
// taking a few budgets) all finish in the background, while a hang costs at most 16
// goroutines, each maybe blocked in a resctrl syscall and so holding an OS thread (a Go
// program dies at 10000 threads). Past it an event is answered at once, not started: the
// runtime, which serialises every container's events on the node, is not held for a whole
// budget by each event while the hang lasts.
const maxWorkers = 16

// workerIdle is how long a worker waits for work before it ends.
const workerIdle = time.Minute

// workers are the goroutines that do the events' work, at most max of them. One that has
// finished waits a while for the next event, keeping the stack it grew through the
// library's calls: an event handed to it costs one wake-up, where a goroutine started per
// event cost this adapter 60-140 µs per event on these VMs (its stack grown anew, another
// thread woken to run it), against 40-50 µs. A worker still busy (a slow resctrl) is simply
// not idle: the next event gets a new one, while there are fewer than max.
//
// A worker is idle from the moment its work ends, under mu, before it hands the result over:
// an event is refused only when every worker is inside a job, never because the worker of
// the event just answered is between its job and its wait.
type workers struct {
	mu      sync.Mutex
	idle    []*worker // most recently idle last: it is handed the next job, the others end
	live    int       // busy and idle
	max     int
	idleFor time.Duration
}

// job is an event's work; what it returns hands the result over, once the worker is idle.
type job func() (deliver func())

// worker is one goroutine; next carries the job handed to it while idle.
type worker struct{ next chan job }

func newWorkers() workers { return newWorkersOf(maxWorkers, workerIdle) }

func newWorkersOf(n int, idleFor time.Duration) workers {
	return workers{max: n, idleFor: idleFor}
}

// run hands job to an idle worker, or to a new one; false when all max are busy (job is not
// run).
func (w *workers) run(j job) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := len(w.idle); n > 0 {
		wk := w.idle[n-1]
		w.idle = w.idle[:n-1]
		wk.next <- j // buffered, and empty while the worker is idle
		return true
	}
	if w.live >= w.max {
		return false
	}
	w.live++
	go w.loop(&worker{next: make(chan job, 1)}, j)
	return true
}

// busy is how many workers are inside a job.
func (w *workers) busy() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.live - len(w.idle)
}

func (w *workers) loop(wk *worker, j job) {
	t := time.NewTimer(w.idleFor)
	defer t.Stop()
	for {
		deliver := j()
		w.mu.Lock()
		w.idle = append(w.idle, wk)
		w.mu.Unlock()
		deliver()
		t.Reset(w.idleFor)
		select {
		case j = <-wk.next:
		case <-t.C:
			if !w.retire(wk) {
				j = <-wk.next // handed a job as its time ran out
				continue
			}
			return
		}
	}
}

// retire ends an idle worker, unless run has just taken it (a job is on its way).
func (w *workers) retire(wk *worker) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := slices.Index(w.idle, wk)
	if i < 0 {
		return false
	}
	w.idle = slices.Delete(w.idle, i, i+1)
	w.live--
	return true
}
