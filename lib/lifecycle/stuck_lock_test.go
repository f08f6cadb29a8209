package lifecycle

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/state"
)

// Placements of a pod whose lock another process holds (a hook stuck in resctrl) all time
// out, as they must, and leave a long-lived front end (the NRI adapter, one Manager for
// every event) no goroutine or OS thread per placement: 100 placements at once, then the
// counts are back within a few of those before.
//
// Not parallel: it counts the whole process's goroutines and threads.
func TestPlacementsOnAStuckLockLeaveNoWaiters(t *testing.T) {
	e, _ := newFakeEnv(t, 8, nil)
	pod := uid(1)
	holdPodLock(t, filepath.Join(e.cfg.StateDir, "locks", pod+".lock"))
	pid := e.proc()
	goroutines, threads := runtime.NumGoroutine(), threadCount(t)
	const n = 100
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := e.create(fmt.Sprintf("c%d", i), pid, fakeCrio(pod))
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; !errors.Is(err, state.ErrLocked) {
			t.Errorf("a placement on a held lock: %v, want ErrLocked", err)
		}
	}
	g, th := runtime.NumGoroutine(), threadCount(t)
	for deadline := time.Now().Add(5 * time.Second); g > goroutines+5 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		g, th = runtime.NumGoroutine(), threadCount(t)
	}
	t.Logf("goroutines %d -> %d, threads %d -> %d after %d timed-out placements", goroutines, g, threads, th, n)
	if g > goroutines+5 || th > threads+20 {
		t.Errorf("%d timed-out placements left %d goroutines (were %d) and %d threads (were %d)", n, g, goroutines, th, threads)
	}
}

// holdPodLock makes another process (util-linux flock) hold the lock file until the test ends.
func holdPodLock(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("flock", path, "sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Skipf("flock(1): %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	fd, err := unix.Open(path, unix.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Close(fd) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); errors.Is(err, unix.EWOULDBLOCK) {
			return
		}
		_ = unix.Flock(fd, unix.LOCK_UN)
		if time.Now().After(deadline) {
			t.Fatal("flock(1) never took the lock")
		}
	}
}

func threadCount(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads: line in /proc/self/status")
	return 0
}
