package lifecycle

import (
	"errors"

	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// ReleaseAll ends every group resctrl-mon owns on this node, whatever still runs in it: what
// an uninstall does, so that no RMID outlives the tool that would have freed it. Each group's
// final counts go to its .end snapshot first; rmdir then hands its tasks to the parent group
// (the kernel does that), so the containers run on, unmonitored. Groups it does not own are
// never touched. A group that cannot be removed keeps its record, so a later run, or
// reconcile after a reinstall, finishes the job.
func (m *Manager) ReleaseAll() (steps []Step, err error) {
	recs, err := m.store.List()
	for _, r := range recs {
		uerr := m.store.Update(r.Group, lockTimeout, func(tx *registry.Tx) error {
			if !tx.Owned {
				return nil
			}
			st := Step{Action: vocab.Removed, Group: tx.Rec.Path, Pod: podOf(tx.Rec)}
			defer func() { steps = append(steps, st); m.count(st.Action) }()
			for id := range tx.Rec.Containers {
				if err := m.store.UnbindContainer(id); err != nil {
					return err
				}
			}
			if _, exists := m.rs.Tasks(addrOf(tx.Rec)); !exists {
				st.Detail = "group was already gone"
				return tx.Delete()
			}
			m.writeSnapshot(tx.Rec, snapshot.End)
			if err := m.rs.Remove(addrOf(tx.Rec)); err != nil {
				m.recordFailure(vocab.FailRemove, tx.Rec.Path, podOf(tx.Rec), err)
				st.Action, st.Detail = vocab.Kept, m.keep(tx, err.Error()+m.kernelSaysSuffix())
				return nil
			}
			return tx.Delete()
		})
		err = errors.Join(err, uerr)
	}
	return steps, err
}
