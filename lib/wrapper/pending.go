package wrapper

import (
	"fmt"

	"github.com/resctrl-mon/resctrl-mon/lib/registry"
)

// actionPending is an exec into a pod that waits for an RMID (its record pending).
const actionPending = "pending"

// execPendingCount is the state dir's count of execs into pending pods: the name
// vocab.OutcomeCount gives source "wrapper", action "pending" (a test holds them
// together), so status and the exporter's outcomes show it beside the hook's. It is not
// lifecycle's name called here: the wrapper runs on every exec, and lifecycle's imports
// would cost each one their start-up.
const execPendingCount = "wrapper.pending"

// execPending is the exec into a pending pod: it runs, unplaced, under either failure
// policy. The pod's containers already run outside any group (failurePolicy closed refuses
// new containers, not processes started in a running one); refusing its execs would only
// fail its exec probes, and kubelet would restart it in a loop. Reconcile, or the next
// placement of the pod, moves what the exec started into the group once there is one.
func execPending(stateDir string, g target) result {
	r := result{action: actionPending, detail: fmt.Sprintf("%s: %s; the exec runs outside it until the pod is completed", g.Path, g.pending)}
	st, err := registry.OpenReadOnly(stateDir)
	if err == nil {
		err = st.Count(execPendingCount)
	}
	if err != nil {
		r.detail += " (not counted: " + err.Error() + ")"
	}
	return r
}
