package resctrlfake

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// Op names an operation a test can make fail.
type Op string

// The operations that can fail on demand.
const (
	OpMkdir       Op = "mkdir"
	OpRmdir       Op = "rmdir"
	OpTasksWrite  Op = "tasks-write"
	OpCounters    Op = "counters"
	OpAssignWrite Op = "assign-write"
)

type fault struct {
	left  int
	errno syscall.Errno
}

// FailNext makes the next n calls of op fail with errno, their error and LastCmdStatus
// saying "fake fault in <op>: <ERRNO>", as the simulator's FailNext says "simulated fault in
// <op>: <ERRNO>". A mkdir failed with ENOSPC or EBUSY is the kernel out of RMIDs, as in the
// simulator: resctrlfs.ErrNoRMID (for ENOSPC), LastCmdStatus "Out of RMIDs".
func (f *Resctrl) FailNext(op Op, n int, errno syscall.Errno) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[op] = fault{left: n, errno: errno}
}

// ClearFaults makes every operation succeed again.
func (f *Resctrl) ClearFaults() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.faults)
}

// fault is op's injected failure on path, if one is left (f.mu held).
func (f *Resctrl) fault(op Op, path string) error {
	ft, ok := f.faults[op]
	if !ok || ft.left == 0 {
		return nil
	}
	ft.left--
	f.faults[op] = ft
	if op == OpMkdir && (ft.errno == syscall.ENOSPC || ft.errno == syscall.EBUSY) {
		f.last = "Out of RMIDs"
		if ft.errno == syscall.ENOSPC {
			return fmt.Errorf("%w (group %s): %w", resctrlfs.ErrNoRMID, path, ft.errno)
		}
		return fmt.Errorf("mkdir %s: %w", path, ft.errno)
	}
	f.last = fmt.Sprintf("fake fault in %s: %s", op, unix.ErrnoName(ft.errno))
	return fmt.Errorf("%s %s: fake fault in %s: %w", op, path, op, ft.errno)
}
