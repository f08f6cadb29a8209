package kernel

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/intel/goresctrl/pkg/monitor"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// goresctrl's errors come out of the seam as its sentinels, with goresctrl's and the
// kernel's errno still in the chain; anything else passes unchanged.
func TestFromMonitor(t *testing.T) {
	t.Parallel()
	other := errors.New("other")
	for _, c := range []struct {
		in   error
		want []error
	}{
		{fmt.Errorf("%w (key k): %w", monitor.ErrNoRMIDs, syscall.ENOSPC), []error{resctrlfs.ErrNoRMID, monitor.ErrNoRMIDs, syscall.ENOSPC}},
		{fmt.Errorf("%w: pid 1", monitor.ErrClassMismatch), []error{resctrlfs.ErrClassMismatch, monitor.ErrClassMismatch}},
		{fmt.Errorf("%w: %q", monitor.ErrNotTracked, "k"), []error{resctrlfs.ErrNotTracked, monitor.ErrNotTracked}},
		{other, []error{other}},
	} {
		got := fromMonitor(c.in)
		for _, w := range c.want {
			if !errors.Is(got, w) {
				t.Errorf("fromMonitor(%v) = %v, not %v", c.in, got, w)
			}
		}
	}
	if fromMonitor(nil) != nil {
		t.Error("fromMonitor(nil) is an error")
	}
	if got := fromMonitor(other); got.Error() != other.Error() {
		t.Errorf("fromMonitor(other) = %v, want it unchanged", got)
	}
}
