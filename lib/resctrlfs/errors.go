package resctrlfs

import (
	"errors"
	"fmt"

	"github.com/intel/goresctrl/pkg/monitor"
)

// The seam's sentinel errors, tested with errors.Is. The implementations (Kernel, the fake)
// wrap them around their own error, so the kernel's errno stays in the chain: an ErrNoRMID
// of a mkdir is also errors.Is(err, syscall.ENOSPC).
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

// fromMonitor translates goresctrl's sentinels into the seam's, keeping goresctrl's error
// (and the errno in it) in the chain.
func fromMonitor(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, monitor.ErrNoRMIDs):
		return fmt.Errorf("%w: %w", ErrNoRMID, err)
	case errors.Is(err, monitor.ErrClassMismatch):
		return fmt.Errorf("%w: %w", ErrClassMismatch, err)
	case errors.Is(err, monitor.ErrNotTracked):
		return fmt.Errorf("%w: %w", ErrNotTracked, err)
	}
	return err
}
