package registry

import (
	"errors"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/test/proctest"
)

// A pod whose lock another process holds (a hook stuck in resctrl) costs a long-lived
// caller, the NRI adapter, at most one waiting goroutine and thread, however many events
// time out on it: after many timed-out Updates, sequential and concurrent, the goroutines
// stay within a few of those before and at most one OS thread waits in flock.
//
// Not parallel: it counts the whole process's goroutines and threads.
func TestStuckLockWaitersBounded(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, locksDir, "pod.lock")
	proctest.HoldFlock(t, path)
	goroutines, threads := runtime.NumGoroutine(), proctest.Threads(t)
	update := func() {
		err := s.Update("pod", 5*time.Millisecond, func(*Tx) error { return nil })
		if !errors.Is(err, ErrLocked) {
			t.Errorf("update of a held lock: %v, want ErrLocked", err)
		}
	}
	for range 100 {
		update()
	}
	done := make(chan struct{})
	for range 100 {
		go func() { update(); done <- struct{}{} }()
	}
	for range 100 {
		<-done
	}
	// The callers' goroutines have returned, but may not be gone yet: give them a moment.
	g := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); g > goroutines+5 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		g = runtime.NumGoroutine()
	}
	inFlock := proctest.ThreadsInSyscall(t, unix.SYS_FLOCK)
	t.Logf("goroutines %d -> %d, threads %d -> %d (%d in flock) after 200 timed-out updates", goroutines, g, threads, proctest.Threads(t), inFlock)
	if g > goroutines+5 || inFlock > 1 {
		t.Errorf("200 timed-out waits on one stuck lock left %d goroutines (were %d) and %d threads blocked in flock (want at most 1)", g, goroutines, inFlock)
	}
}
