package inventory

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// Status is where things stand: what `resctrl-mon status` shows.
type Status struct {
	Groups   []Pod              `json:"groups"` // never null: [] when there are none
	RMIDs    RMIDs              `json:"rmids"`
	Failures map[string]int     `json:"failures"` // by reason, over the last FailureWindow
	Recent   []registry.Failure `json:"recentFailures"`
	// Counts are what the front ends counted since the state dir was made (boot, on tmpfs):
	// "hook.created", "adapter.joined", "snapshot.end", ... (vocab.OutcomeCount).
	Counts map[string]uint64 `json:"counts"`
	// MBM is the kernel's bandwidth counter assignment (Linux ≥ 6.18); nil on older kernels.
	MBM *resctrlfs.Assignment `json:"mbmAssignment,omitempty"`
}

// FailureWindow is how far back status counts failures.
const FailureWindow = time.Hour

// Status reports every owned group (sorted by state, then path), RMID use and recent
// failures.
func (inv *Inventory) Status() (Status, error) {
	pods, err := inv.Pods(Options{Tasks: true})
	errs := []error{err}
	slices.SortFunc(pods, func(a, b Pod) int {
		if c := strings.Compare(string(a.State), string(b.State)); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	st := Status{Groups: pods, Failures: map[string]int{}, Recent: []registry.Failure{}}
	st.RMIDs, err = inv.RMIDs()
	errs = append(errs, err)
	fails, err := inv.store.Failures(inv.now().Add(-FailureWindow))
	errs = append(errs, err)
	for _, f := range fails {
		st.Failures[f.Reason]++
	}
	if len(fails) > 10 {
		fails = fails[len(fails)-10:]
	}
	if fails != nil {
		st.Recent = fails
	}
	if a, aerr := inv.Assignment(); aerr != nil || a.Mode != "" {
		st.MBM = &a
		errs = append(errs, aerr)
	}
	st.Counts, err = inv.Counts()
	errs = append(errs, err)
	if st.Counts == nil {
		st.Counts = map[string]uint64{}
	}
	return st, errors.Join(errs...)
}
