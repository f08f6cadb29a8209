// Package kernel is lib/resctrlfs's Groups on a real (or simulated) resctrl mount, through
// goresctrl's pkg/monitor: the one package that links goresctrl. Its errors are the seam's
// sentinels (resctrlfs.ErrNoRMID, resctrlfs.ErrClassMismatch, resctrlfs.ErrNotTracked), translated here from
// goresctrl's with goresctrl's error and the kernel's errno kept in the chain. The binaries
// hand Open to what they run (lifecycle.New, the hook, the NRI adapter) as a
// resctrlfs.Opener; the rest of the library knows the seam only.
package kernel

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"

	"github.com/intel/goresctrl/pkg/monitor"
	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/logging"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// Groups is resctrlfs.Groups on a resctrl mount, through goresctrl's pkg/monitor. What it
// reads it reads through the seam's read-only face (resctrlfs.View), as the read side does.
type Groups struct {
	root  string
	view  *resctrlfs.View
	canon func(string) string
	mon   *monitor.Manager
	tasks *resctrlfs.FileTaskWriter
}

var (
	_ resctrlfs.Groups = (*Groups)(nil)
	_ resctrlfs.Opener = Open
)

// Open checks root with mount (MountFor the configuration; nil is resctrlfs.Check, the kernel's
// resctrl only) and returns Groups on it. valid and canon are the group
// names the caller owns and their canonical form (goresctrl validates every key with them).
// log receives goresctrl's own messages, at warning level and above: goresctrl logs through
// a process-wide logger, and this is where the library opens resctrl, so it is wired here,
// once, for every binary (unwired, goresctrl prints its raw lines on stderr, outside the
// log and its format).
func Open(root string, mount resctrlfs.Mount, valid func(string) bool, canon func(string) string, log *slog.Logger) (resctrlfs.Groups, error) {
	view, err := resctrlfs.OpenView(root, mount)
	if err != nil {
		return nil, err
	}
	if log != nil {
		monitor.SetLogger(logging.AtLeast(log.With("lib", "goresctrl"), slog.LevelWarn))
	}
	mon, err := monitor.New(monitor.Options{ResctrlRoot: root, KeyValidator: valid, KeyCanonicalizer: canon})
	if err != nil {
		return nil, fmt.Errorf("resctrl: %w", err)
	}
	return &Groups{root: root, view: view, canon: canon, mon: mon, tasks: resctrlfs.NewTaskWriter(root)}, nil
}

func (k *Groups) Counters(g resctrlfs.Addr) ([]resctrlfs.Reading, []resctrlfs.Missing, error) {
	return k.view.Counters(g, false)
}

func (k *Groups) Assignment() (resctrlfs.Assignment, error) { return k.view.Assignment() }

func (k *Groups) GroupAssignment(g resctrlfs.Addr) (resctrlfs.GroupAssignment, error) {
	return k.view.GroupAssignment(g)
}

func (k *Groups) WriteAssignment(g resctrlfs.Addr, line string) error {
	return resctrlfs.WriteAssignment(k.root, g.Path(), line)
}

// Ensure is goresctrl's EnsureGroup: it tracks the group by name from then on.
func (k *Groups) Ensure(g resctrlfs.Addr) error {
	_, err := k.mon.EnsureGroup(g.Name, g.Class)
	return fromMonitor(err)
}

// Assign is goresctrl's AssignPID into the group it tracks by g's name.
func (k *Groups) Assign(g resctrlfs.Addr, tid int) error {
	return fromMonitor(k.mon.AssignPID(g.Name, tid))
}

// Remove is goresctrl's Remove for a group it tracks (made or found by this process); one it
// does not (made by another process since: a reconcile or a poststop ends groups a hook
// made) is removed by its rmdir here, instead of being made known to goresctrl first.
func (k *Groups) Remove(g resctrlfs.Addr) error {
	name := g.Name
	k.tasks.Forget(name)
	err := k.mon.Remove(name)
	if !errors.Is(err, monitor.ErrNotTracked) {
		return fromMonitor(err)
	}
	if k.canon != nil {
		name = k.canon(name)
	}
	p := filepath.Join(k.root, resctrlfs.GroupPath(g.Class, name))
	if err := unix.Rmdir(p); err != nil && !errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "rmdir", Path: p, Err: err}
	}
	return nil
}

func (k *Groups) LastCmdStatus() string { return k.view.LastCmdStatus() }

func (k *Groups) Exists(g resctrlfs.Addr) bool { return k.view.Exists(g) }

func (k *Groups) Tasks(g resctrlfs.Addr) (map[int]bool, bool) {
	tids, err := k.view.Tasks(g)
	if err != nil {
		return map[int]bool{}, false
	}
	return tids, true
}

func (k *Groups) WriteTasks(g resctrlfs.Addr, ids []int, result func(id int, err error) error) error {
	return k.tasks.Write(g.Path(), ids, result)
}

// LimboThreshold says whether RMIDs a removal frees go to the kernel's limbo (whenever
// llc_occupancy is monitored: see the package comment, "RMIDs and limbo"), and the
// llc_occupancy (bytes, in every L3 domain) under which the limbo worker frees one. A group
// whose own occupancy is already below it gives an RMID usable after the worker's next pass;
// one above it, only once its lines leave the cache.
func (k *Groups) LimboThreshold() (threshold uint64, on bool, err error) {
	return resctrlfs.ReadLimboThreshold(k.root)
}

// fromMonitor translates goresctrl's sentinels into the seam's, keeping goresctrl's error
// (and the errno in it) in the chain.
func fromMonitor(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, monitor.ErrNoRMIDs):
		return fmt.Errorf("%w: %w", resctrlfs.ErrNoRMID, err)
	case errors.Is(err, monitor.ErrClassMismatch):
		return fmt.Errorf("%w: %w", resctrlfs.ErrClassMismatch, err)
	case errors.Is(err, monitor.ErrNotTracked):
		return fmt.Errorf("%w: %w", resctrlfs.ErrNotTracked, err)
	}
	return err
}
