package aside

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// NewCalls returns Calls for this process, turning the garbage collector off and fixing at
// least two Ps until Close (see Calls): GOMAXPROCS set by hand is no longer changed by the
// runtime when its cgroup's CPU limit changes, which would stop the world too.
func NewCalls() (*Calls, error) {
	c := &Calls{gcPercent: debug.SetGCPercent(-1), procs: runtime.GOMAXPROCS(0)}
	runtime.GOMAXPROCS(max(2, c.procs))
	return c, nil
}

func restore(c *Calls) {
	debug.SetGCPercent(c.gcPercent)
	runtime.GOMAXPROCS(c.procs)
}

// vfork is clone(CLONE_VM|CLONE_VFORK), in vfork_linux_amd64.s.
func vfork() (pid, errno uintptr)

// runChild runs steps in a vfork child on a thread of its own with every signal blocked (a
// Go signal handler must not run in the child), and reaps it.
func runChild(steps []Step, keep []any) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var all, old uint64 = ^uint64(0), 0
	if _, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&all)), uintptr(unsafe.Pointer(&old)), 8, 0, 0); e != 0 {
		return fmt.Errorf("aside: block signals: %w", e)
	}
	pid, errno := vforkRun(steps)
	// Restoring a mask read just above cannot fail.
	_, _, _ = syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
	runtime.KeepAlive(keep)
	if errno != 0 {
		return fmt.Errorf("aside: vfork: %w", syscall.Errno(errno))
	}
	// The child has exited: vfork returns then.
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(int(pid), &ws, unix.WALL, nil)
		if err != syscall.EINTR {
			return nil
		}
	}
}

// vforkRun is the parent's and the child's: the child runs the steps and exits, and never
// returns here; the parent returns as soon as vfork does, before touching anything the
// child may have written on this stack.
//
//go:noinline
//go:norace
//go:nocheckptr
func vforkRun(steps []Step) (pid, errno uintptr) {
	pid, errno = vfork()
	if pid != 0 || errno != 0 {
		return pid, errno
	}
	child(steps)
	return 0, 0
}

// child runs in the vfork child: raw system calls only, nothing that could grow the stack,
// allocate or enter Go's scheduler (the child's runtime is the parent's).
//
//go:nosplit
//go:norace
//go:nocheckptr
func child(steps []Step) {
	// Nothing inherited: the runtime waits for its pipes to close, and a lock held through
	// a copy of its file would outlive the hook.
	if _, _, e := syscall.RawSyscall(unix.SYS_CLOSE_RANGE, 0, ^uintptr(0), 0); e != 0 {
		for fd := uintptr(0); fd < 1024; fd++ {
			_, _, _ = syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0) // most are not open
		}
	}
	_, _, _ = syscall.RawSyscall(syscall.SYS_SETSID, 0, 0, 0) // a vfork child is never a group leader
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
	for {
		_, _, _ = syscall.RawSyscall(syscall.SYS_EXIT, 0, 0, 0)
	}
}
