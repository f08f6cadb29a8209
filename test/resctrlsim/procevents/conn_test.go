package procevents

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openConn opens a Conn for an integration test. The tests require root:
// older kernels refuse the subscription otherwise, and the overflow test
// uses SO_RCVBUFFORCE. With RESCTRLSIM_REQUIRE=1 a missing precondition
// fails the test instead of skipping it.
func openConn(t *testing.T) *Conn {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("RESCTRLSIM_REQUIRE") == "1" {
			t.Fatal("proc connector tests need root (RESCTRLSIM_REQUIRE=1 forbids skipping)")
		}
		t.Skip("proc connector tests need root")
	}
	c, err := Open()
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// pump waits for and drains events, passing each to fn, until done reports
// true or the deadline passes (then the test fails with what).
func pump(t *testing.T, c *Conn, deadline time.Time, fn func(Event), done func() bool, what string) {
	t.Helper()
	for !done() {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("timed out waiting for %s (lost-event reports: %d)", what, c.Lost())
		}
		if _, err := c.Wait(left); err != nil {
			t.Fatalf("Wait: %v", err)
		}
		if _, err := c.Drain(fn); err != nil {
			t.Fatalf("Drain: %v", err)
		}
	}
}

// TestProcessEvents starts `sh -c 'sleep 0.05 & wait'` and checks the fork,
// exec and exit of sh and of the backgrounded sleep, and their order.
func TestProcessEvents(t *testing.T) {
	t.Parallel()
	c := openConn(t)
	me := os.Getpid()

	cmd := exec.Command("/bin/sh", "-c", "sleep 0.05 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sh: %v", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	sh := cmd.Process.Pid

	// Events for sh and sleep, in the order Drain delivered them. sleep's
	// pid is learnt from its Fork, which the kernel emits (in
	// copy_process) before the child can run, so it precedes the child's
	// own events.
	var (
		seq          []Event
		sleep        int
		shExited     bool
		sleepExited  bool
		sawShFork    bool
		sawSleepFork bool
	)
	record := func(e Event) {
		switch {
		case e.Kind == Fork && e.Pid == sh:
			sawShFork = true
		case e.Kind == Fork && e.ParentPid == sh && sleep == 0:
			sleep = e.Pid
			sawSleepFork = true
		case e.Pid == sh || (sleep != 0 && e.Pid == sleep):
		default:
			return
		}
		seq = append(seq, e)
		if e.Kind == Exit && e.Pid == sh {
			shExited = true
		}
		if e.Kind == Exit && sleep != 0 && e.Pid == sleep {
			sleepExited = true
		}
	}
	pump(t, c, time.Now().Add(10*time.Second), record, func() bool { return shExited && sleepExited }, "exit of sh and sleep")
	if err := <-waited; err != nil {
		t.Fatalf("sh: %v", err)
	}
	if !sawShFork || !sawSleepFork {
		t.Fatalf("missing fork events (sh %v, sleep %v): %+v", sawShFork, sawSleepFork, seq)
	}
	t.Logf("events: %+v", seq)

	index := func(want func(Event) bool, name string) int {
		t.Helper()
		for i, e := range seq {
			if want(e) {
				return i
			}
		}
		t.Fatalf("no %s event in %+v", name, seq)
		return -1
	}
	shFork := index(func(e Event) bool { return e.Kind == Fork && e.Pid == sh }, "sh fork")
	shExec := index(func(e Event) bool { return e.Kind == Exec && e.Pid == sh }, "sh exec")
	sleepFork := index(func(e Event) bool { return e.Kind == Fork && e.Pid == sleep }, "sleep fork")
	sleepExec := index(func(e Event) bool { return e.Kind == Exec && e.Pid == sleep }, "sleep exec")
	sleepExit := index(func(e Event) bool { return e.Kind == Exit && e.Pid == sleep }, "sleep exit")
	shExit := index(func(e Event) bool { return e.Kind == Exit && e.Pid == sh }, "sh exit")

	// os/exec forks from whichever Go thread runs Start, without
	// CLONE_PARENT, so real_parent is that thread: our tgid, some tid.
	if f := seq[shFork]; f.Tgid != sh || f.ParentTgid != me {
		t.Errorf("sh fork = %+v, want Tgid %d and ParentTgid %d (this process)", f, sh, me)
	}
	if f := seq[sleepFork]; f.Tgid != sleep || f.ParentPid != sh || f.ParentTgid != sh {
		t.Errorf("sleep fork = %+v, want Pid=Tgid and ParentPid=ParentTgid=%d", f, sh)
	}
	for _, i := range []int{shExec, sleepExec, sleepExit, shExit} {
		if e := seq[i]; e.Pid != e.Tgid || e.ParentPid != 0 || e.ParentTgid != 0 {
			t.Errorf("%v event %+v: want Pid == Tgid and no parent fields", e.Kind, e)
		}
	}
	order := []struct {
		a, b   int
		before string
	}{
		{shFork, shExec, "sh fork before sh exec"},
		{shExec, sleepFork, "sh exec before sleep fork"},
		{sleepFork, sleepExec, "sleep fork before sleep exec"},
		{sleepExec, sleepExit, "sleep exec before sleep exit"},
		{sleepExit, shExit, "sleep exit before sh exit (sh waits)"},
	}
	for _, o := range order {
		if o.a >= o.b {
			t.Errorf("want %s; got positions %d, %d in %+v", o.before, o.a, o.b, seq)
		}
	}
}

// TestThreadEvents makes the Go runtime create threads: goroutines that
// LockOSThread and then block each need their own thread, and when they
// return still locked the runtime exits those threads, so every round needs
// fresh ones.
func TestThreadEvents(t *testing.T) {
	t.Parallel()
	c := openConn(t)
	me, parent := os.Getpid(), os.Getppid()

	var threadFork, threadExit *Event
	record := func(e Event) {
		if e.Tgid != me || e.Pid == me {
			return
		}
		switch {
		case e.Kind == Fork && threadFork == nil:
			threadFork = &e
		case e.Kind == Exit && threadExit == nil:
			threadExit = &e
		}
	}
	found := func() bool { return threadFork != nil && threadExit != nil }
	deadline := time.Now().Add(10 * time.Second)
	for round := 0; !found(); round++ {
		if time.Now().After(deadline) {
			t.Fatalf("after %d rounds: thread fork %+v, thread exit %+v", round, threadFork, threadExit)
		}
		runLockedGoroutines(20)
		// Give the kernel a moment's worth of events, bounded by a
		// deadline rather than a fixed sleep.
		roundEnd := time.Now().Add(200 * time.Millisecond)
		for !found() && time.Now().Before(roundEnd) {
			if _, err := c.Wait(time.Until(roundEnd)); err != nil {
				t.Fatalf("Wait: %v", err)
			}
			if _, err := c.Drain(record); err != nil {
				t.Fatalf("Drain: %v", err)
			}
		}
	}
	t.Logf("thread fork %+v (this process %d, its parent %d); thread exit %+v", *threadFork, me, parent, *threadExit)
	// The kernel fact the simulator depends on: for CLONE_THREAD the new
	// task's real_parent is the creator's real_parent, so the thread's
	// "parent" is our parent process, not us.
	if threadFork.ParentTgid != parent {
		t.Errorf("thread fork ParentTgid = %d, want the process's parent %d (not the creating thread)", threadFork.ParentTgid, parent)
	}
	if threadFork.ParentTgid == me {
		t.Errorf("thread fork ParentTgid = %d is this process", me)
	}
}

// runLockedGoroutines starts n goroutines that each lock their OS thread,
// waits until all hold one, then releases them; they return without
// unlocking, which makes the runtime terminate their threads.
func runLockedGoroutines(n int) {
	var locked, finished sync.WaitGroup
	release := make(chan struct{})
	for range n {
		locked.Add(1)
		finished.Add(1)
		go func() {
			defer finished.Done()
			runtime.LockOSThread()
			locked.Done()
			<-release
		}()
	}
	locked.Wait()
	close(release)
	finished.Wait()
}

// TestOverflowCountsLost shrinks the receive buffer to its minimum, lets
// forks pile up undrained so the kernel overflows it, and checks that Drain
// reports the overflow through Lost rather than an error and that events
// keep flowing afterwards.
func TestOverflowCountsLost(t *testing.T) {
	t.Parallel()
	c := openConn(t)
	// The kernel clamps this to its minimum (a couple of KiB), room for a
	// handful of event skbs.
	if err := unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 0); err != nil {
		t.Fatalf("shrink SO_RCVBUF: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for c.Lost() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no overflow reported")
		}
		// 50 short-lived processes: over 100 events, far beyond the buffer.
		if out, err := exec.Command("/bin/sh", "-c", "i=0; while [ $i -lt 50 ]; do /bin/true; i=$((i+1)); done").CombinedOutput(); err != nil {
			t.Fatalf("sh: %v: %s", err, out)
		}
		if _, err := c.Drain(nil); err != nil {
			t.Fatalf("Drain after overflow: %v", err)
		}
	}
	t.Logf("lost-event reports: %d", c.Lost())

	// Back to a generous buffer: a new child's fork must still arrive.
	if err := unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvBufSize); err != nil {
		t.Fatalf("restore SO_RCVBUFFORCE: %v", err)
	}
	if _, err := c.Drain(nil); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	cmd := exec.Command("/bin/true")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	pid := cmd.Process.Pid
	if err := cmd.Wait(); err != nil {
		t.Fatalf("true: %v", err)
	}
	var sawFork, sawExit bool
	pump(t, c, time.Now().Add(10*time.Second), func(e Event) {
		if e.Pid == pid {
			sawFork = sawFork || e.Kind == Fork
			sawExit = sawExit || e.Kind == Exit
		}
	}, func() bool { return sawFork && sawExit }, "fork and exit after overflow")
}

func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	t.Parallel()
	c := openConn(t) // its cleanup closes a third time
	if err := c.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c.Drain(nil); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Drain after Close = %v, want os.ErrClosed", err)
	}
	if _, err := c.Wait(time.Millisecond); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Wait after Close = %v, want os.ErrClosed", err)
	}
}

func TestWaitTimesOut(t *testing.T) {
	t.Parallel()
	c := openConn(t)
	// Without the subscription traffic drained first the socket is likely
	// readable; drain, then a zero wait must return promptly either way.
	if _, err := c.Drain(nil); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	start := time.Now()
	if _, err := c.Wait(0); err != nil {
		t.Fatalf("Wait(0): %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Wait(0) took %v", d)
	}
}
