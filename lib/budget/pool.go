package budget

import (
	"slices"
	"sync"
	"time"
)

// Pool is a bounded set of worker goroutines for Run, at most max of them. A worker that has
// finished waits a while for the next job, keeping the stack it grew through the library's
// calls: a job handed to it costs one wake-up, where a goroutine started per job has its
// stack grown anew and another thread woken to run it. A worker still busy (a slow resctrl)
// is simply not idle: the next job gets a new one, while there are fewer than max. The bound
// is what keeps a hang cheap: each busy worker may be blocked in a system call, holding an
// OS thread, and past max a job is refused at once (ErrNotStarted) instead of adding one.
//
// A worker is idle from the moment its job ends, under mu, before it hands the result over:
// a job is refused only when every worker is inside a job, never because the worker of the
// job just answered is between its job and its wait.
type Pool struct {
	mu      sync.Mutex
	idle    []*worker // most recently idle last: it is handed the next job, the others end
	live    int       // busy and idle
	max     int
	idleFor time.Duration
}

// NewPool is a Pool of at most n workers, each ending once idle for idleFor.
func NewPool(n int, idleFor time.Duration) *Pool {
	return &Pool{max: n, idleFor: idleFor}
}

// job is a unit of work; what it returns hands the result over, once the worker is idle.
type job func() (deliver func())

// worker is one goroutine; next carries the job handed to it while idle.
type worker struct{ next chan job }

// Max is the most workers p runs at once.
func (p *Pool) Max() int { return p.max }

// Busy is how many workers are inside a job.
func (p *Pool) Busy() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.live - len(p.idle)
}

// Live is how many workers exist, busy or idle.
func (p *Pool) Live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.live
}

// run hands j to an idle worker, or to a new one; false when all max are busy (j is not
// run).
func (p *Pool) run(j job) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		wk := p.idle[n-1]
		p.idle = p.idle[:n-1]
		wk.next <- j // buffered, and empty while the worker is idle
		return true
	}
	if p.live >= p.max {
		return false
	}
	p.live++
	go p.loop(&worker{next: make(chan job, 1)}, j)
	return true
}

func (p *Pool) loop(wk *worker, j job) {
	t := time.NewTimer(p.idleFor)
	defer t.Stop()
	for {
		deliver := j()
		p.mu.Lock()
		p.idle = append(p.idle, wk)
		p.mu.Unlock()
		deliver()
		t.Reset(p.idleFor)
		select {
		case j = <-wk.next:
		case <-t.C:
			if !p.retire(wk) {
				j = <-wk.next // handed a job as its time ran out
				continue
			}
			return
		}
	}
}

// retire ends an idle worker, unless run has just taken it (a job is on its way).
func (p *Pool) retire(wk *worker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.Index(p.idle, wk)
	if i < 0 {
		return false
	}
	p.idle = slices.Delete(p.idle, i, i+1)
	p.live--
	return true
}
