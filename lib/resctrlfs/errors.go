package resctrlfs

import (
	"errors"
)

// The seam's sentinel errors, tested with errors.Is. The implementations (lib/resctrlfs/kernel,
// the fake) wrap them around their own error, so the kernel's errno stays in the chain: an
// ErrNoRMID of a mkdir is also errors.Is(err, syscall.ENOSPC).
var (
	// ErrNoRMID: the kernel has no free RMID for a new monitoring group (mkdir's ENOSPC,
	// "Out of RMIDs"; see the package comment, "RMIDs and limbo").
	ErrNoRMID = errors.New("no free RMID")
	// ErrClassMismatch: the task is in another allocation class than the group (see the
	// package comment, "Classes").
	ErrClassMismatch = errors.New("allocation class mismatch")
	// ErrNotTracked: a group this process neither made nor found (Assign names one).
	ErrNotTracked = errors.New("group not tracked")
)
