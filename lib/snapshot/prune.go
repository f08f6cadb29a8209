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
)

// tempGrace is how old a temp file must be before Prune takes it for the leftover of a
// crashed Write rather than one still being written.
const tempGrace = time.Minute

// Prune removes snapshot files (*.begin, *.end; never anything else, never temp files of a
// running Write younger than a minute) older than maxAge (by the Time inside the file,
// falling back to mtime for unreadable files), then the oldest ones beyond maxCount (counting
// begin+end files of one group as one unit: a pair is kept or removed together, so a consumer
// never finds an .end without its .begin). maxAge <= 0 and maxCount <= 0 mean no limit.
// Returns how many files it removed; keeps going after a failed remove and returns
// errors.Join of the failures.
//
// A unit's age is that of its newest file. Of a pair, the .end goes first and the .begin only
// once the .end is gone, so a failed remove leaves at worst a lone .begin. Temp files of
// Write older than a minute are removed too and counted. A missing dir has nothing to prune.
//
// A .begin without its .end belongs to a group that is still alive (or to one whose removal
// has not been recorded yet): it is never pruned and not counted, so a pod that lives longer
// than maxAge still has its .begin when its .end is written.
func Prune(dir string, maxAge time.Duration, maxCount int, now time.Time) (removed int, err error) {
	return prune(dir, maxAge, maxCount, now, os.Remove)
}

// unit is one group's snapshot files.
type unit struct {
	group  string
	names  []string  // file names, .end before .begin
	newest time.Time // of its files
}

// prune is Prune with the remove call as a parameter, so tests can make it fail (as root,
// nothing else reliably does).
func prune(dir string, maxAge time.Duration, maxCount int, now time.Time, remove func(string) error) (removed int, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("snapshot: prune %s: %w", dir, err)
	}
	var errs []error
	// rm removes one file; a file already gone (another Prune) is neither counted nor a failure.
	rm := func(name string) bool {
		err := remove(filepath.Join(dir, name))
		switch {
		case err == nil:
			removed++
		case errors.Is(err, fs.ErrNotExist):
		default:
			errs = append(errs, fmt.Errorf("snapshot: prune: %w", err))
			return false
		}
		return true
	}

	units := map[string]*unit{}
	for _, e := range entries {
		// Only regular files: a symlink or directory named *.end is someone else's.
		if !e.Type().IsRegular() {
			continue
		}
		name := e.Name()
		if isTemp(name) {
			info, err := e.Info()
			if err == nil && now.Sub(info.ModTime()) > tempGrace {
				rm(name)
			}
			continue
		}
		group, _, ok := parseName(name)
		if !ok {
			continue
		}
		var t time.Time
		if s, err := ReadFile(filepath.Join(dir, name)); err == nil {
			t = s.Time
		} else if info, err := e.Info(); err == nil {
			t = info.ModTime()
		} else {
			continue // vanished since ReadDir
		}
		u := units[group]
		if u == nil {
			u = &unit{group: group}
			units[group] = u
		}
		u.names = append(u.names, name)
		if t.After(u.newest) {
			u.newest = t
		}
	}

	list := make([]*unit, 0, len(units))
	for _, u := range units {
		// ".end" sorts before ".begin" in reverse order, which is the removal order we want.
		slices.SortFunc(u.names, func(a, b string) int { return strings.Compare(b, a) })
		list = append(list, u)
	}
	// Newest first; the group name makes ties deterministic.
	slices.SortFunc(list, func(a, b *unit) int {
		if c := b.newest.Compare(a.newest); c != 0 {
			return c
		}
		return strings.Compare(a.group, b.group)
	})
	complete := 0
	for _, u := range list {
		if !slices.ContainsFunc(u.names, func(n string) bool { return strings.HasSuffix(n, "."+string(End)) }) {
			continue // a live group's .begin
		}
		tooOld := maxAge > 0 && now.Sub(u.newest) > maxAge
		tooMany := maxCount > 0 && complete >= maxCount
		complete++
		if !tooOld && !tooMany {
			continue
		}
		for _, name := range u.names {
			if !rm(name) {
				break // keep the .begin when its .end could not go
			}
		}
	}
	return removed, errors.Join(errs...)
}
