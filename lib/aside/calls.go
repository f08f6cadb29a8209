package aside

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"
)

// ErrStuck: a program run aside did not end by its deadline. Its child is left to finish,
// or hang, on its own.
var ErrStuck = errors.New("resctrl did not answer in time")

// Calls runs short programs of system calls (Step) in a child that shares this process's
// memory, as an exec does before it execs (vfork): a few microseconds to start, where a
// child of this binary (Start) takes a whole Go start. The child only makes raw system
// calls, closes every file it inherited first (a runtime's pipes, the pod's lock), and is a
// session of its own, so a call the kernel never finishes holds the child alone: the caller
// stops waiting at its deadline and its process can still end.
//
// While a child runs, the calling thread waits in the kernel, unseen by Go's scheduler,
// holding its P; if the child hangs, they stay with it, and anything that stops the world
// waits for it for good. So NewCalls turns the garbage collector off (its memory limit too:
// GOMEMLIMIT starts a collection of its own), waits out a cycle already under way, and
// keeps at least three Ps. The process must not stop the world itself while a child runs
// (runtime.GC, debug.FreeOSMemory, runtime.ReadMemStats, a stack dump of every goroutine, a
// profile, GOMAXPROCS), and one whose child hung must end soon: it is meant for a
// short-lived one, the OCI hook, one Calls at a time (each running child holds a P:
// children of several at once can take them all). One window is left: a collection whose
// trigger another goroutine tested just before NewCalls turned it off still starts. Nor
// may the child wait on this process (a FUSE file system it serves, as the resctrl
// simulator in a test): a stop of the world while it waits would wait on it in turn.
//
// A child is killed at its deadline (SIGALRM, a timer of its own): it makes no step after
// it, whatever becomes of its parent. A call the kernel does not interrupt (resctrl's
// mutex, a FUSE request already sent) still finishes, and the child dies as it returns.
type Calls struct {
	mu    sync.Mutex
	stuck bool
	// What NewCalls changed, for Close.
	gcPercent, procs int
	memLimit         int64
	// last says how the last child ended, once it is reaped (for tests).
	last chan error
}

// Step is one system call of a program run aside.
type Step struct {
	Trap uintptr
	Args [4]uintptr
	// FdOf, when > 0, puts the result of step FdOf-1 (a file the child opened) in Args[0].
	FdOf int
	// Stop ends the program when this call fails.
	Stop bool

	// Ran, R1 and Errno are what the call returned, once the program ran it.
	Ran   bool
	R1    uintptr
	Errno syscall.Errno
}

// Run runs steps in a child and fills in their results. keep is what the steps' arguments
// point to (paths, buffers): it is kept alive while the child may use it. A child that
// ends by a signal is an error, naming it: the steps it did not finish are not Ran. At the
// deadline Run returns ErrStuck (the child is killed there), and so does every later Run
// while that child is not reaped: it may hold a kernel lock that the next program would
// wait for. A deadline already passed runs nothing.
func (c *Calls) Run(deadline time.Time, steps []Step, keep ...any) error {
	for i, s := range steps {
		if s.FdOf < 0 || s.FdOf > i {
			return fmt.Errorf("aside: step %d takes its file from step %d, which does not run before it", i, s.FdOf-1)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stuck {
		return ErrStuck
	}
	if !time.Now().Before(deadline) {
		return ErrStuck
	}
	done := make(chan error, 1)
	c.last = done
	go func() { done <- runChild(deadline, steps, keep) }()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case err := <-done:
		done <- err
		return err
	case <-timer.C:
		c.stuck = true
		return ErrStuck
	}
}

// Close gives the garbage collector and the Ps back, unless a child hung: its thread still
// waits with a P, and a collection would wait for it.
func (c *Calls) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stuck {
		return
	}
	restore(c)
}

// AtFDCWD is AT_FDCWD (-100) as a Step's argument: a path relative to the working directory.
const AtFDCWD = ^uintptr(99)
