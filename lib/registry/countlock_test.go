package registry

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A process stopped while it holds a count's flock (SIGSTOP, a frozen cgroup) must not hang
// every hook worker that counts, nor the exporter's collect: both waits end at countLockWait.
func TestCountLockWaitIsBounded(t *testing.T) {
	t.Parallel()
	s, err := Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hook.created", "hook.joined"} {
		if err := s.Count(name); err != nil {
			t.Fatal(err)
		}
	}
	// The stopped holder: another open file description holding the flock.
	fd, err := unix.Open(filepath.Join(s.Dir(), countsDir, "hook.created"), unix.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Close(fd) }()
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	type result struct {
		counts map[string]uint64
		err    error
	}
	done := make(chan result, 2)
	go func() { done <- result{err: s.Count("hook.created")} }()
	go func() { c, err := s.Counts(); done <- result{c, err} }()
	// The bound is the point of the test: well past countLockWait, a wait still going is the
	// hang this guards against.
	limit := time.After(countLockWait + 10*time.Second)
	for range 2 {
		select {
		case r := <-done:
			if !errors.Is(r.err, ErrLocked) {
				t.Errorf("with the count's lock held: %v, want ErrLocked", r.err)
			}
			if r.counts != nil && r.counts["hook.joined"] != 1 {
				t.Errorf("the other counts were not read: %v", r.counts)
			}
		case <-limit:
			t.Fatalf("still waiting for a count's lock %s after its bound (%s)", countLockWait+10*time.Second, countLockWait)
		}
	}
	// Let go, and counting goes on from where it was.
	if err := unix.Flock(fd, unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := s.Count("hook.created"); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Counts(); err != nil || c["hook.created"] != 2 {
		t.Errorf("counts %v, %v; want hook.created 2", c, err)
	}
}
