package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// tempGrace is how old a temp file must be before Prune takes it for the leftover of a
// crashed Write rather than one still being written.
const tempGrace = time.Minute

// PrunePolicy says which snapshots Prune keeps.
type PrunePolicy struct {
	// MaxAge: finished lives older than this go. <= 0: no limit.
	MaxAge time.Duration
	// MaxCount: of finished lives, only the newest this many are kept. <= 0: no limit.
	MaxCount int
	// Now is the time ages are measured at; zero means time.Now().
	Now time.Time
	// Live reports whether the life of group begun at life is still going on, i.e. whether
	// its lone .begin will still get an .end. It is asked only about lives that have a
	// .begin and no .end, and only when the answer matters. life is zero for a version 1
	// file, which does not say which life it is of. Nil: every lone .begin is alive.
	Live func(group string, life time.Time) bool
}

// Prune removes old snapshots from dir. Its unit is one life of one group: the .begin and
// .end of that life go together, the .end first, so a consumer never finds an .end without
// its .begin (a failed remove leaves at worst a lone .begin). Another life of the same group
// is another unit.
//
// A finished life (it has an .end, or its .begin is all there is and Live says the life is
// over: the group vanished without an .end being written) goes when it is older than
// p.MaxAge, or beyond the newest p.MaxCount finished lives. A life's age is that of its
// newest file, read from the name (a .begin is written when the life begins, which its stamp
// says) or the modification time (of an .end, and of version 1 files, whose names carry no
// time): no file is opened, so the cost does not grow with what the files hold. A lone .begin
// of a live life is never pruned nor counted, so a pod that lives longer than MaxAge still
// has its .begin when its .end is written. Version 1 files pair by group among themselves,
// but for the .begin of a life going on at the upgrade, which pairs with its life's .end (see
// Versions in the package doc).
//
// Temp files of Write older than a minute are removed too and counted. Nothing else is
// touched: not symbolic links, not directories, not names that are not a snapshot's.
// dir itself must not be a symbolic link (ErrSymlinkDir); a missing dir has nothing to
// prune. Returns how many files it removed; keeps going after a failed remove and returns
// errors.Join of the failures.
func Prune(dir string, p PrunePolicy) (removed int, err error) {
	return prune(dir, p, func(dfd int, name string) error { return unix.Unlinkat(dfd, name, 0) })
}

// unitKey is a life of a group as its names spell it.
type unitKey struct{ group, stamp string }

// unit is one life of one group.
type unit struct {
	group      string
	life       time.Time // zero for version 1 files
	stamp      string    // its spelling in the names; "" for version 1
	begin, end string    // file names, "" when absent
	newest     time.Time // of its files (of its .end only once endAged)
	endAged    bool      // the .end's mtime is in newest
}

// add puts a file of the unit's, as old as t, in it. No file is older than the life.
func (u *unit) add(name string, kind Kind, t time.Time) {
	if kind == End {
		u.end = name
	} else {
		u.begin = name
	}
	for _, t := range []time.Time{t, u.life} {
		if t.After(u.newest) {
			u.newest = t
		}
	}
}

// prune is Prune with unlink as a parameter, so tests can make it fail (as root, nothing
// else reliably does).
func prune(dir string, p PrunePolicy, unlink func(dfd int, name string) error) (removed int, err error) {
	d, err := openDir(dir, false)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("snapshot: prune %s: %w", dir, err)
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return 0, fmt.Errorf("snapshot: prune %s: %w", dir, err)
	}
	dfd := int(d.Fd())
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}

	var errs []error
	// rm removes one file; a file already gone (another Prune) is neither counted nor a failure.
	rm := func(name string) bool {
		err := unlink(dfd, name)
		switch {
		case err == nil:
			removed++
		case errors.Is(err, fs.ErrNotExist):
		default:
			errs = append(errs, fmt.Errorf("snapshot: prune: %w", &os.PathError{Op: "remove", Path: filepath.Join(dir, name), Err: err}))
			return false
		}
		return true
	}

	units := map[unitKey]*unit{}
	for _, e := range entries {
		// Only regular files: a symlink or directory named *.end is someone else's.
		if !e.Type().IsRegular() {
			continue
		}
		name := e.Name()
		if isTemp(name) {
			if t, ok := mtime(dfd, name); ok && now.Sub(t) > tempGrace {
				rm(name)
			}
			continue
		}
		n, stamp, ok := parseName(name)
		if !ok {
			continue
		}
		// A .begin is written when its life begins: its stamp is its age. A version 1 name
		// has no time in it, so its mtime is read now; an .end's (the life's end is not in
		// its name) only when it can matter, below.
		t := n.Life
		if n.Life.IsZero() {
			if t, ok = mtime(dfd, name); !ok {
				continue // gone since the listing
			}
		}
		k := unitKey{n.Group, stamp}
		u := units[k]
		if u == nil {
			u = &unit{group: n.Group, life: n.Life, stamp: stamp}
			units[k] = u
		}
		u.add(name, n.Kind, t)
		u.endAged = u.endAged || (n.Kind == End && n.Life.IsZero())
	}

	adoptLegacy(units)

	// age makes u.newest exact: until then it may be younger than its .end.
	age := func(u *unit) {
		if u.end != "" && !u.endAged {
			if t, ok := mtime(dfd, u.end); ok {
				u.add(u.end, End, t)
			}
			u.endAged = true
		}
	}
	list := make([]*unit, 0, len(units))
	for _, u := range units {
		list = append(list, u)
	}
	// Count can prune only when there are more lives than it keeps; then the order matters,
	// and with it every age.
	byCount := p.MaxCount > 0 && len(list) > p.MaxCount
	if byCount {
		for _, u := range list {
			age(u)
		}
	}
	// Newest first; group and life make ties deterministic.
	slices.SortFunc(list, func(a, b *unit) int {
		if c := b.newest.Compare(a.newest); c != 0 {
			return c
		}
		if c := strings.Compare(a.group, b.group); c != 0 {
			return c
		}
		return strings.Compare(a.stamp, b.stamp)
	})
	tooOld := func(u *unit) bool {
		if p.MaxAge <= 0 || now.Sub(u.newest) <= p.MaxAge {
			return false
		}
		age(u) // its .end may be young
		return now.Sub(u.newest) > p.MaxAge
	}
	finished := 0
	for _, u := range list {
		old := tooOld(u)
		if u.end == "" {
			// A lone .begin: Live is asked only if the answer can change what is removed
			// (it may read the caller's registry).
			if !old && !byCount {
				continue
			}
			if p.Live == nil || p.Live(u.group, u.life) {
				continue
			}
		}
		tooMany := byCount && finished >= p.MaxCount
		finished++
		if !old && !tooMany {
			continue
		}
		if u.end != "" && !rm(u.end) {
			continue // keep the .begin when its .end could not go
		}
		if u.begin != "" {
			rm(u.begin)
		}
	}
	return removed, errors.Join(errs...)
}

// adoptLegacy gives a life's .end the version 1 .begin of that life. A life going on at the
// upgrade from version 1 began with <group>.begin and ends with <group>.<life>.end, which has
// no .begin of its own; they must be kept and removed together like any pair. The .begin was
// written when its life began: it is of the last life of its group begun before it (its
// mtime) among those with a lone .end.
func adoptLegacy(units map[unitKey]*unit) {
	orphans := map[string][]*unit{} // lone .ends by group
	for _, u := range units {
		if u.stamp != "" && u.begin == "" {
			orphans[u.group] = append(orphans[u.group], u)
		}
	}
	if len(orphans) == 0 {
		return
	}
	for k, old := range units {
		if k.stamp != "" || old.begin == "" || old.end != "" {
			continue
		}
		var into *unit
		for _, u := range orphans[k.group] {
			if u.begin == "" && !u.life.After(old.newest) && (into == nil || u.life.After(into.life)) {
				into = u
			}
		}
		if into != nil {
			into.add(old.begin, Begin, old.newest)
			delete(units, k)
		}
	}
}
