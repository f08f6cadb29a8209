package inventory

// Counts returns what the front ends counted in the state dir: outcomes by front end and
// action ("hook.created"), snapshots written by kind ("snapshot.end"), failures by reason
// ("failure.create").
func (inv *Inventory) Counts() (map[string]uint64, error) {
	return inv.store.Counts()
}
