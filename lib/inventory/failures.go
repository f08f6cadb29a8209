package inventory

import (
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/state"
)

// Failures returns the failures recorded in the state dir since t, oldest first, without
// the rest of Status (which counts every group's tasks): the exporter reads them at every
// scrape.
func (inv *Inventory) Failures(since time.Time) ([]state.Failure, error) {
	return inv.store.Failures(since)
}

// Counts returns what the front ends counted in the state dir: outcomes by front end and
// action ("hook.created"), snapshots written by kind ("snapshot.end").
func (inv *Inventory) Counts() (map[string]uint64, error) {
	return inv.store.Counts()
}
