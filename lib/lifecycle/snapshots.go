package lifecycle

import (
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// writeSnapshot records a group's readings at its creation (begin) or removal (end), so a
// passive consumer can account a pod's whole life after the group is gone. A failure is
// logged and counted, never fatal: the container matters more than the snapshot.
func (m *Manager) writeSnapshot(rec registry.Record, kind snapshot.Kind) {
	if m.cfg.SnapshotDir == "" {
		return
	}
	readings, missing, err := m.rs.Counters(addrOf(rec))
	if err != nil {
		m.recordFailure(vocab.FailSnapshot, rec.Path, podOf(rec), err)
	}
	s := snapshot.Snapshot{Kind: kind, Time: m.now().UTC(), Group: rec.Group, Life: rec.Created, Path: rec.Path, Class: rec.Class}
	if rec.PodUID != "" || rec.PodName != "" {
		s.Pod = &snapshot.Pod{UID: rec.PodUID, Namespace: rec.Namespace, Name: rec.PodName}
	}
	for _, r := range readings {
		kind := "gauge"
		if r.Cumulative {
			kind = "counter"
		}
		s.Readings = append(s.Readings, snapshot.Reading{Domain: r.Domain, Name: r.Name, Value: r.Value, Kind: kind, Unit: r.Unit})
	}
	for _, u := range missing {
		s.Unavailable = append(s.Unavailable, u.Domain+"/"+u.Name)
	}
	if _, err := snapshot.Write(m.cfg.SnapshotDir, s); err != nil {
		m.recordFailure(vocab.FailSnapshot, rec.Path, podOf(rec), err)
		return
	}
	if err := m.store.Count(vocab.SnapshotCount(kind)); err != nil {
		m.log.Warn("counting a snapshot", "err", err)
	}
}

// pruneSnapshots applies the snapshot limits; part of the housekeeping (Sweep).
func (m *Manager) pruneSnapshots() error {
	if m.cfg.SnapshotDir == "" {
		return nil
	}
	_, err := snapshot.Prune(m.cfg.SnapshotDir, snapshot.PrunePolicy{MaxAge: time.Duration(m.cfg.SnapshotMaxAge),
		MaxCount: m.cfg.SnapshotMaxCount, Now: m.now(), Live: m.snapshotLifeLive})
	return err
}

// snapshotLifeLive tells Prune whether a lone .begin's life is still going on: the group is
// ours and its record is of that life. A version 1 .begin (zero life, written before lives
// were told apart) is kept while its group is ours, since it may be the live one's. A record
// that cannot be read keeps the .begin: pruning is never worth losing a live life's start.
func (m *Manager) snapshotLifeLive(group string, life time.Time) bool {
	rec, owned, err := m.store.Load(group)
	if err != nil {
		return true
	}
	return owned && (life.IsZero() || rec.Created.Equal(life))
}
