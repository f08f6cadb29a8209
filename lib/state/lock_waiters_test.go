package state

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A pod whose lock another process holds (a hook stuck in resctrl) costs a long-lived
// caller, the NRI adapter, at most one waiting goroutine and thread, however many events
// time out on it: the goroutines and OS threads after many timed-out Updates, sequential
// and concurrent, stay within a few of those before.
//
// Not parallel: it counts the whole process's goroutines and threads.
func TestStuckLockWaitersBounded(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, locksDir, "pod.lock")
	holdLock(t, path)
	goroutines, threads := runtime.NumGoroutine(), osThreads(t)
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
	g, th := runtime.NumGoroutine(), osThreads(t)
	for deadline := time.Now().Add(5 * time.Second); g > goroutines+5 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		g, th = runtime.NumGoroutine(), osThreads(t)
	}
	t.Logf("goroutines %d -> %d, threads %d -> %d after 200 timed-out updates", goroutines, g, threads, th)
	if g > goroutines+5 || th > threads+5 {
		t.Errorf("200 timed-out waits on one stuck lock left %d goroutines (were %d) and %d threads (were %d)", g, goroutines, th, threads)
	}
}

// holdLock makes another process (util-linux flock) hold path's flock until the test ends.
func holdLock(t *testing.T, path string) {
	t.Helper()
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

// osThreads is this process's thread count.
func osThreads(t *testing.T) int {
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
