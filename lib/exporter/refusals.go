package exporter

import (
	"fmt"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/permission"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
)

// RefusalWindow is how far back /healthz looks for writes the kernel refused: long enough
// for a probe every few seconds to see one, short enough that health comes back once the
// operator has changed the profile or the capabilities and the next writes succeed.
const RefusalWindow = 5 * time.Minute

// recentRefusals reports the writes to resctrl or the state dir refused (EACCES, EPERM,
// EROFS) in the last RefusalWindow, from the failures the hooks, reconcile and the NRI
// adapter recorded in the state dir: in mode nri the writer is another process (another
// container), and this is how its refusals reach /healthz. nil when there are none, or
// when the failures cannot be read (the state dir check says why).
func recentRefusals(stateDir string, now time.Time) error {
	st, err := registry.OpenReadOnly(stateDir)
	if err != nil {
		return nil
	}
	fails, _ := st.Failures(now.Add(-RefusalWindow))
	n := 0
	var last *permission.Denial
	var lastF registry.Failure
	for _, f := range fails {
		if d, ok := permission.ClassifyText(f.Error); ok {
			n, last, lastF = n+1, d, f
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%d write(s) refused in the last %s; the last (%s, %s, at %s): %w",
		n, RefusalWindow, lastF.Reason, lastF.Subject, lastF.Time.Format(time.RFC3339), last)
}
