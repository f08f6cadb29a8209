package lifecycle

import (
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
)

// A group's life is one RMID's: it begins at the group's mkdir, when its counts start from
// zero, and ends at its rmdir. Placement (a pod's first container, or one whose group
// vanished) and reconcile (a pod found without its group) begin lives the same way, here:
// the record says when the life began (Created, which names its .begin and .end), and the
// .begin is written.

// podRecord is the record of a pod new to the registry: its group at path under class, and
// the pod's identity. Its life begins now, at the mkdir that follows.
func (m *Manager) podRecord(name, path, class string, idn identity.Identity) registry.Record {
	return registry.Record{Group: name, Path: path, Class: class, PodUID: idn.PodUID, Namespace: idn.Namespace,
		PodName: idn.PodName, SandboxID: idn.SandboxID, NRI: idn.Runtime == identity.NRI, Created: m.now().UTC(),
		Containers: map[string]time.Time{}}
}

// beginLife begins a life of the group tx holds, just made by mkdir. A record made for this
// mkdir (fresh, podRecord's) already says when; one kept from a group that vanished (a
// re-mount, a runtime's RDT setup) is given a new start and saved first, so the new life's
// .begin never overwrites the old one's. A .begin that cannot be written is counted, never
// fatal (writeSnapshot).
func (m *Manager) beginLife(tx *registry.Tx, fresh bool) error {
	if !fresh {
		tx.Rec.Created = m.now().UTC()
		if err := tx.Save(); err != nil {
			return err
		}
	}
	m.writeSnapshot(tx.Rec, snapshot.Begin)
	return nil
}
