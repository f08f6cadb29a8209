package nriplugin

import (
	"sync/atomic"

	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// pendingRetry runs lifecycle's CompletePending in the background when an event may have
// freed an RMID (a group removed, or gone idle where rmidReclaim lets a pending pod take it):
// nothing else retries a pending pod of the adapter but its next container event, the
// housekeeping timer or a restart's Synchronize, and under a real kubelet a pod's containers
// may never start again. At most one run at a time; events meanwhile make it run once more.
// It never runs on the event's own path: housekeeping does not delay a container.
type pendingRetry struct {
	running atomic.Bool
	again   atomic.Bool
}

// freed says that an event's outcome may have freed an RMID for a pending pod.
func freed(a vocab.Action) bool {
	return a == vocab.Removed || a == vocab.Idle
}

// completePendingSoon starts the background retry, or asks a running one to go once more.
func (p *Plugin) completePendingSoon() {
	p.pending.again.Store(true)
	if !p.pending.running.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for {
			for p.pending.again.Swap(false) {
				p.completePending()
			}
			p.pending.running.Store(false)
			// An event between the last look and the store above found it running: look
			// once more, unless another run has taken over.
			if !p.pending.again.Load() || !p.pending.running.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// completePending is one retry, logged when it did something.
func (p *Plugin) completePending() {
	_, _, m := p.current()
	if m == nil {
		return
	}
	steps, err := m.CompletePending()
	if err != nil || len(steps) > 0 {
		p.logger().Info("pending pods retried", "steps", steps, "err", err)
	}
}
