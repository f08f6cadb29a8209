package lifecycle

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
)

// Placements of a pod whose lock another process holds (a hook stuck in resctrl) all time
// out, as they must, and leave a long-lived front end (the NRI adapter, one Manager for
// every event) no goroutine or OS thread per placement: 100 placements at once, then the
// goroutines are back within a few of those before and at most one thread waits in flock.
//
// Not parallel: it counts the whole process's goroutines and threads.
func TestPlacementsOnAStuckLockLeaveNoWaiters(t *testing.T) {
	e := newEnv(t, bareFake(8))
	pod := uid(1)
	proctest.HoldFlock(t, filepath.Join(e.cfg.StateDir, "locks", pod+".lock"))
	pid := e.proc()
	goroutines, threads := runtime.NumGoroutine(), proctest.Threads(t)
	const n = 100
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := e.create(fmt.Sprintf("c%d", i), pid, fakeCrio(pod))
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; !errors.Is(err, registry.ErrLocked) {
			t.Errorf("a placement on a held lock: %v, want ErrLocked", err)
		}
	}
	g := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); g > goroutines+5 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		g = runtime.NumGoroutine()
	}
	inFlock := proctest.ThreadsInSyscall(t, unix.SYS_FLOCK)
	t.Logf("goroutines %d -> %d, threads %d -> %d (%d in flock) after %d timed-out placements", goroutines, g, threads, proctest.Threads(t), inFlock, n)
	if g > goroutines+5 || inFlock > 1 {
		t.Errorf("%d timed-out placements left %d goroutines (were %d) and %d threads blocked in flock (want at most 1)", n, g, goroutines, inFlock)
	}
}
