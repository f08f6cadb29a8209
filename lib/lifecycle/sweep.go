package lifecycle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// sweepEvery limits how often a poststop hook looks for expired idle groups.
const sweepEvery = 10 * time.Second

// sweepLockWait is how long a sweep waits for a group's lock before leaving the group to
// the next sweep: a hook working on the pod is doing the job. A short wait, not none: a
// lock is briefly held after its holder closed it while a forked child of that process has
// not yet exec'd (flock follows the open file).
const sweepLockWait = 200 * time.Millisecond

// Sweep is the housekeeping: it removes owned groups idle past the retention window,
// retries failed removals, completes pending pods, hands out bandwidth counters (mbmAssignment: policy) and prunes
// snapshots. It never runs on a container's critical
// path: poststop (MaybeSweep), reconcile and the NRI adapter's timer call it.
func (m *Manager) Sweep() (removed []string, err error) {
	recs, err := m.store.List()
	for _, r := range recs {
		if !m.expired(r) {
			continue
		}
		uerr := m.store.Update(r.Group, sweepLockWait, func(tx *registry.Tx) error {
			// Re-read under the lock: a container may have joined since the listing.
			if tx.Owned && m.expired(tx.Rec) {
				action, _ := m.remove(tx)
				m.count(action)
				if action == vocab.Removed {
					removed = append(removed, r.Path)
				}
			}
			return nil
		})
		if !errors.Is(uerr, registry.ErrLocked) {
			err = errors.Join(err, uerr)
		}
	}
	// After removals: their RMIDs may complete pending pods (reclaiming idle groups for
	// them under rmidReclaim: idle), else nothing retries a pending pod of the NRI adapter
	// until its next container event.
	_, perr := m.CompletePending()
	err = errors.Join(err, perr)
	// The counters of removed groups are free to hand on.
	m.assignCounters()
	// Temporary files of writers killed before their rename (see registry.RemoveStaleTemps).
	if _, terr := m.store.RemoveStaleTemps(m.now().Add(-staleTempAge)); terr != nil {
		m.log.Warn("removing stale temporary files", "err", terr)
	}
	return removed, errors.Join(err, m.pruneSnapshots())
}

// MaybeSweep runs Sweep when the last one is older than sweepEvery.
func (m *Manager) MaybeSweep() ([]string, error) {
	stamp := filepath.Join(m.store.Dir(), "last-sweep")
	if fi, err := os.Lstat(stamp); err == nil && m.now().Sub(fi.ModTime()) < sweepEvery {
		return nil, nil
	}
	if err := os.WriteFile(stamp, nil, 0o600); err != nil {
		return nil, fmt.Errorf("sweep stamp: %w", err)
	}
	now := m.now()
	_ = os.Chtimes(stamp, now, now)
	return m.Sweep()
}

// expired reports whether a group has been idle for the whole retention window.
func (m *Manager) expired(r registry.Record) bool {
	return len(r.Containers) == 0 && r.IdleSince != nil && m.now().Sub(*r.IdleSince) >= time.Duration(m.cfg.Retention)
}
