package registry

import (
	"errors"
	"time"
)

// Tx is one locked change of a group's record: Update loads it, the caller changes Rec and
// says when to write it.
type Tx struct {
	Rec Record
	// Owned: the group has a record, so resctrl-mon made it (see Record).
	Owned bool
	s     *Store
}

// Save writes Rec now. A change may save more than once: the record is written before
// mkdir, so a process killed in between leaves a group that is provably ours.
func (tx *Tx) Save() error {
	if err := tx.s.save(tx.Rec); err != nil {
		return err
	}
	tx.Owned = true
	return nil
}

// Delete forgets the group: it is no longer ours.
func (tx *Tx) Delete() error {
	if err := tx.s.delete(tx.Rec.Group); err != nil {
		return err
	}
	tx.Owned = false
	return nil
}

// Update is the one way records change: it takes the group's lock (waiting at most wait;
// ErrLocked past it), loads the record and runs fn, which saves or deletes through tx. A
// group left without a record has its lock file removed before the lock is released, so
// the state dir holds one lock file per owned group, not one per pod ever seen.
func (s *Store) Update(group string, wait time.Duration, fn func(tx *Tx) error) (err error) {
	l, err := s.lockGroup(group, wait)
	if err != nil {
		return err
	}
	tx := &Tx{s: s}
	defer func() {
		if !tx.Owned {
			err = errors.Join(err, l.unlink())
		}
		err = errors.Join(err, l.unlock())
	}()
	rec, owned, err := s.Load(group)
	if err != nil {
		// An unreadable record is still a claim: keep its lock file.
		tx.Owned = true
		return err
	}
	tx.Rec, tx.Owned = rec, owned
	if !owned {
		tx.Rec = Record{Group: group}
	}
	return fn(tx)
}
