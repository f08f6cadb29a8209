package resctrlfs

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/intel/goresctrl/pkg/monitor"
	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/logging"
)

// Groups is resctrl as the project uses it, the one seam between what lib/lifecycle decides
// and the file system: a group's mkdir (Ensure) and rmdir (Remove), its tasks (Assign with
// goresctrl's class check, WriteTasks, Tasks, Exists), its mon_data (Counters), counter
// assignment in mbm_event mode (Assignment, GroupAssignment, WriteAssignment) and the kernel's
// word on a refusal (LastCmdStatus). Nothing of lifecycle reaches resctrl another way, so its
// decisions (placement, reclaim, snapshots, the counter policy) are unit-tested on the
// in-memory fake (test/resctrlfake), without root or FUSE.
//
// Names are monitoring group names (the directory under mon_groups/); paths are below the
// resctrl root ("mon_groups/<name>" or "<class>/mon_groups/<name>"). Errors wrap the seam's
// sentinels (ErrNoRMID, ErrClassMismatch, ErrNotTracked: errors.go) and keep the kernel's
// errnos, so callers test them with errors.Is and never import goresctrl.
type Groups interface {
	// Ensure creates the group under class ("" for the root), or adopts it if it exists.
	Ensure(name, class string) error
	// Assign moves one task into the group, after checking it is not in another class.
	Assign(name string, tid int) error
	// WriteTasks writes ids to the tasks file at path (a group's path), one per write(2),
	// handing each write's result to result, which may stop the loop.
	WriteTasks(path string, ids []int, result func(id int, err error) error) error
	// Tasks lists the group's thread ids; ok is false when the group does not exist.
	Tasks(path string) (tids map[int]bool, ok bool)
	// Exists reports whether the group at path exists.
	Exists(path string) bool
	// Remove removes the group of that name under class (its RMID is freed), whoever made
	// it; one already gone is no error.
	Remove(name, class string) error
	// LastCmdStatus is the kernel's word on the last failed command ("" if unreadable).
	LastCmdStatus() string
	// Counters reads every counter of the group at path: readings, and the counters with no
	// sample and why; a group that is gone is an error wrapping os.ErrNotExist.
	Counters(path string) ([]Reading, []Missing, error)
	// Assignment is the mount's counter assignment mode and counters (ReadAssignment).
	Assignment() (Assignment, error)
	// GroupAssignment is the group at path's assigned counters (ReadGroupAssignment).
	GroupAssignment(path string) (GroupAssignment, error)
	// WriteAssignment writes one assignment line to the group at path (WriteAssignment).
	WriteAssignment(path, line string) error
}

// Kernel is Groups on a resctrl mount, through goresctrl's pkg/monitor.
type Kernel struct {
	root  string
	canon func(string) string
	mon   *monitor.Manager
	tasks *TaskWriter
	// counters reads groups' mon_data, listed once for every group of the mount.
	counters MonReader
}

var _ Groups = (*Kernel)(nil)

// Open checks root with mount (MountFor the configuration; nil is Check, the kernel's
// resctrl only) and returns Groups on it. valid and canon are the group
// names the caller owns and their canonical form (goresctrl validates every key with them).
// log receives goresctrl's own messages, at warning level and above: goresctrl logs through
// a process-wide logger, and this is where the library opens resctrl, so it is wired here,
// once, for every binary (unwired, goresctrl prints its raw lines on stderr, outside the
// log and its format).
func Open(root string, mount Mount, valid func(string) bool, canon func(string) string, log *slog.Logger) (*Kernel, error) {
	if mount == nil {
		mount = Check
	}
	if err := mount(root); err != nil {
		return nil, err
	}
	if log != nil {
		monitor.SetLogger(logging.AtLeast(log.With("lib", "goresctrl"), slog.LevelWarn))
	}
	mon, err := monitor.New(monitor.Options{ResctrlRoot: root, KeyValidator: valid, KeyCanonicalizer: canon})
	if err != nil {
		return nil, fmt.Errorf("resctrl: %w", err)
	}
	return &Kernel{root: root, canon: canon, mon: mon, tasks: NewTaskWriter(root)}, nil
}

func (k *Kernel) Counters(path string) ([]Reading, []Missing, error) {
	return k.counters.Read(filepath.Join(k.root, path))
}

func (k *Kernel) Assignment() (Assignment, error) { return ReadAssignment(k.root) }

func (k *Kernel) GroupAssignment(path string) (GroupAssignment, error) {
	return ReadGroupAssignment(k.root, path)
}

func (k *Kernel) WriteAssignment(path, line string) error { return WriteAssignment(k.root, path, line) }

func (k *Kernel) Ensure(name, class string) error {
	_, err := k.mon.EnsureGroup(name, class)
	return fromMonitor(err)
}

func (k *Kernel) Assign(name string, tid int) error { return fromMonitor(k.mon.AssignPID(name, tid)) }

// Remove is goresctrl's Remove for a group it tracks (made or found by this process); one it
// does not (made by another process since: a reconcile or a poststop ends groups a hook
// made) is removed by its rmdir here, instead of being made known to goresctrl first.
func (k *Kernel) Remove(name, class string) error {
	k.tasks.Forget(name)
	err := k.mon.Remove(name)
	if !errors.Is(err, monitor.ErrNotTracked) {
		return fromMonitor(err)
	}
	if k.canon != nil {
		name = k.canon(name)
	}
	p := filepath.Join(k.root, GroupPath(class, name))
	if err := unix.Rmdir(p); err != nil && !errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "rmdir", Path: p, Err: err}
	}
	return nil
}

// GroupPath is a monitoring group's path below the resctrl root: under the root group's
// mon_groups, or under its class's.
func GroupPath(class, name string) string {
	if class == "" {
		return "mon_groups/" + name
	}
	return class + "/mon_groups/" + name
}

func (k *Kernel) LastCmdStatus() string { return LastCmdStatus(k.root) }

func (k *Kernel) Exists(path string) bool {
	_, err := os.Stat(filepath.Join(k.root, path))
	return err == nil
}

func (k *Kernel) Tasks(path string) (map[int]bool, bool) {
	b, err := os.ReadFile(filepath.Join(k.root, path, "tasks"))
	if err != nil {
		return map[int]bool{}, false
	}
	return ParseTasks(b), true
}

func (k *Kernel) WriteTasks(path string, ids []int, result func(id int, err error) error) error {
	return k.tasks.Write(path, ids, result)
}

// ParseTasks parses a tasks file: one thread id a line. Anything else is not a task.
func ParseTasks(b []byte) map[int]bool {
	in := map[int]bool{}
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil && n > 0 {
			in[n] = true
		}
	}
	return in
}
