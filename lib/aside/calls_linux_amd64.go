package aside

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// NewCalls returns Calls for this process, turning the garbage collector off, its memory
// limit with it, and fixing at least three Ps until Close (see Calls): GOMAXPROCS set by hand
// is no longer changed by the runtime when its cgroup's CPU limit changes, which would stop
// the world too.
func NewCalls() (*Calls, error) {
	// The memory limit first: with it, GOMEMLIMIT would start a collection although the
	// collector is off.
	c := &Calls{memLimit: debug.SetMemoryLimit(math.MaxInt64), gcPercent: debug.SetGCPercent(-1), procs: runtime.GOMAXPROCS(0)}
	// SetGCPercent waits for a cycle's marking, not for its end: its last step, once the
	// world runs again, has every P flush its caches, and would wait on a P inside vfork.
	// A change of GOMAXPROCS takes the collector's own lock, which a cycle holds from its
	// start to that very end (runtime.stopTheWorldGC), so it returns once no cycle is left.
	// A change: the same count stops nothing. One P more than the two needed is also a
	// spare for the process's goroutines while a child's thread holds one. (A read of the
	// memory statistics waited too, but only for the world's lock, which a cycle lets go
	// while it marks, and it cost the hook a few hundred microseconds: docs/benchmarks.md.)
	runtime.GOMAXPROCS(max(2, c.procs) + 1)
	return c, nil
}

func restore(c *Calls) {
	debug.SetGCPercent(c.gcPercent)
	debug.SetMemoryLimit(c.memLimit)
	runtime.GOMAXPROCS(c.procs)
}

// vfork is clone(CLONE_VM|CLONE_VFORK), in vfork_linux_amd64.s.
func vfork() (pid, errno uintptr)

// sigaction is the kernel's struct sigaction on amd64.
type sigaction struct {
	handler, flags, restorer uintptr
	mask                     uint64
}

// program is what the child reads: its steps, and what it needs to end itself at the
// deadline, all made by the parent (the child cannot allocate).
type program struct {
	steps []Step
	// alarm is the time left to the deadline: the child's own ITIMER_REAL, whose SIGALRM
	// (its action the default, unblocked in the child alone) kills it there.
	alarm   unix.Itimerval
	dfl     sigaction
	alrmSet uint64
}

// runChild runs steps in a vfork child on a thread of its own with every signal blocked (a
// Go signal handler must not run in the child), and reaps it. The child is killed at the
// deadline by a timer of its own, so that it makes no step after it: a call the kernel
// does not interrupt (resctrl's mutex, a FUSE request already sent) still finishes, and the
// child dies as it returns.
func runChild(deadline time.Time, steps []Step, keep []any) error {
	left := time.Until(deadline)
	if left <= 0 {
		return ErrStuck
	}
	p := &program{steps: steps, alarm: unix.Itimerval{Value: unix.NsecToTimeval(max(left.Nanoseconds(), 1000))}, alrmSet: 1 << (syscall.SIGALRM - 1)}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var all, old uint64 = ^uint64(0), 0
	if _, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&all)), uintptr(unsafe.Pointer(&old)), 8, 0, 0); e != 0 {
		return fmt.Errorf("aside: block signals: %w", e)
	}
	pid, errno := vforkRun(p)
	// Restoring a mask read just above cannot fail.
	_, _, _ = syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
	runtime.KeepAlive(p)
	runtime.KeepAlive(keep)
	if errno != 0 {
		return fmt.Errorf("aside: vfork: %w", syscall.Errno(errno))
	}
	// The child has exited: vfork returns then.
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(int(pid), &ws, unix.WALL, nil)
		if err != syscall.EINTR {
			break
		}
	}
	return exitError(ws, steps)
}

// exitError is how the child ended, as Run's error: a signal is never a success, whatever
// the steps it ran said (those it did not reach, or died in, are not Ran). Its SIGALRM is
// its deadline.
func exitError(ws syscall.WaitStatus, steps []Step) error {
	if ws.Exited() {
		if ws.ExitStatus() != 0 {
			return errors.New("aside: the child could not arm its deadline, and made no step")
		}
		return nil
	}
	next := 0
	for next < len(steps) && steps[next].Ran {
		next++
	}
	if ws.Signal() == syscall.SIGALRM {
		return fmt.Errorf("%w: the child was killed at its deadline before step %d of %d finished", ErrStuck, next, len(steps))
	}
	return fmt.Errorf("aside: the child was killed by signal %d (%v) before step %d of %d finished", int(ws.Signal()), ws.Signal(), next, len(steps))
}

// vforkRun is the parent's and the child's: the child runs the steps and exits, and never
// returns here; the parent returns as soon as vfork does, before touching anything the
// child may have written on this stack.
//
//go:noinline
//go:norace
//go:nocheckptr
func vforkRun(p *program) (pid, errno uintptr) {
	pid, errno = vfork()
	if pid != 0 || errno != 0 {
		return pid, errno
	}
	child(p)
	return 0, 0
}

// child runs in the vfork child: raw system calls only, nothing that could grow the stack,
// allocate or enter Go's scheduler (the child's runtime is the parent's).
//
//go:nosplit
//go:norace
//go:nocheckptr
func child(p *program) {
	// Nothing inherited: the runtime waits for its pipes to close, and a lock held through
	// a copy of its file would outlive the hook.
	if _, _, e := syscall.RawSyscall(unix.SYS_CLOSE_RANGE, 0, ^uintptr(0), 0); e != 0 {
		for fd := uintptr(0); fd < 1024; fd++ {
			_, _, _ = syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0) // most are not open
		}
	}
	_, _, _ = syscall.RawSyscall(syscall.SYS_SETSID, 0, 0, 0) // a vfork child is never a group leader
	// The deadline: SIGALRM's default action (the child's table of actions is its own, a
	// copy: no CLONE_SIGHAND) ends it. A child that cannot arm it makes no step at all.
	if _, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(syscall.SIGALRM), uintptr(unsafe.Pointer(&p.dfl)), 0, 8, 0, 0); e != 0 {
		exit(1)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETITIMER, unix.ITIMER_REAL, uintptr(unsafe.Pointer(&p.alarm)), 0); e != 0 {
		exit(1)
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_UNBLOCK, uintptr(unsafe.Pointer(&p.alrmSet)), 0, 8, 0, 0); e != 0 {
		exit(1)
	}
	steps := p.steps
	for i := range steps {
		s := &steps[i]
		a0 := s.Args[0]
		if s.FdOf > 0 {
			a0 = steps[s.FdOf-1].R1
		}
		r1, _, e := syscall.RawSyscall6(s.Trap, a0, s.Args[1], s.Args[2], s.Args[3], 0, 0)
		s.R1, s.Errno, s.Ran = r1, e, true
		if e != 0 && s.Stop {
			break
		}
	}
	exit(0)
}

// exit ends the child with status code.
//
//go:nosplit
//go:norace
func exit(code uintptr) {
	for {
		_, _, _ = syscall.RawSyscall(syscall.SYS_EXIT, code, 0, 0)
	}
}
