package nriplugin

import (
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/budget"
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

// workerIdle is how long a worker waits for the next event before it ends.
const workerIdle = time.Minute

// newWorkers is the pool that does the events' work: a worker kept idle between events costs
// the next one a wake-up, not a goroutine's start (see budget.Pool).
func newWorkers() *budget.Pool { return budget.NewPool(maxWorkers, workerIdle) }
