package lifecycle

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/intel/goresctrl/pkg/monitor"

	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/lib/state"
)

// writeSnapshot records a group's readings at its creation (begin) or removal (end), so a
// passive consumer can account a pod's whole life after the group is gone. A failure is
// logged and counted, never fatal: the container matters more than the snapshot.
func (m *Manager) writeSnapshot(rec state.Record, kind snapshot.Kind) {
	if m.cfg.SnapshotDir == "" {
		return
	}
	readings, err := m.mon.ReadCounters(rec.Group)
	if err != nil {
		m.recordFailure("snapshot", rec.Group, err)
	}
	s := snapshot.Snapshot{Kind: kind, Time: m.now().UTC(), Group: rec.Group, Path: rec.Path, Class: rec.Class}
	if rec.PodUID != "" || rec.PodName != "" {
		s.Pod = &snapshot.Pod{UID: rec.PodUID, Namespace: rec.Namespace, Name: rec.PodName}
	}
	s.Unavailable = unavailable(filepath.Join(m.cfg.ResctrlRoot, rec.Path, "mon_data"), readings)
	for _, r := range readings {
		kind := "gauge"
		if r.Kind == monitor.Cumulative {
			kind = "counter"
		}
		s.Readings = append(s.Readings, snapshot.Reading{Domain: r.Domain, Name: r.Name, Value: r.Value, Kind: kind, Unit: r.Unit})
	}
	if _, err := snapshot.Write(m.cfg.SnapshotDir, s); err != nil {
		m.recordFailure("snapshot", rec.Group, err)
		return
	}
	if kind == snapshot.End {
		if _, err := snapshot.Prune(m.cfg.SnapshotDir, time.Duration(m.cfg.SnapshotMaxAge), m.cfg.SnapshotMaxCount, m.now()); err != nil {
			m.log.Warn("pruning snapshots", "err", err)
		}
	}
}

// recordFailure logs a failure and keeps it for status.
func (m *Manager) recordFailure(reason, subject string, err error) {
	m.log.Warn("failure", "reason", reason, "subject", subject, "err", err)
	if serr := m.store.RecordFailure(state.Failure{Time: m.now().UTC(), Reason: reason, Subject: subject,
		Error: strings.TrimSpace(err.Error())}); serr != nil {
		m.log.Warn("recording a failure", "err", serr)
	}
}

// unavailable lists the counter files goresctrl returned no number for: they read
// "Unavailable", "Error" or "Unassigned", which is no sample, not zero, and a consumer must
// know which.
func unavailable(monData string, got []monitor.Reading) []string {
	have := map[string]bool{}
	for _, r := range got {
		have[r.Domain+"/"+r.Name] = true
	}
	var out []string
	domains, _ := os.ReadDir(monData)
	for _, d := range domains {
		files, _ := os.ReadDir(filepath.Join(monData, d.Name()))
		for _, f := range files {
			if k := d.Name() + "/" + f.Name(); !f.IsDir() && !have[k] {
				out = append(out, k)
			}
		}
	}
	return out
}
