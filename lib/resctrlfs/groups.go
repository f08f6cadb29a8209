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
// in-memory fake (test/resctrlfake), without root or FUSE. What the kernel does with each
// call is the package comment's.
//
// Every method names its group by Addr (class and name). Errors wrap the seam's sentinels
// (ErrNoRMID, ErrClassMismatch, ErrNotTracked: errors.go) and keep the kernel's errnos, so
// callers test them with errors.Is and never import goresctrl.
type Groups interface {
	// Ensure creates the group, or adopts it if it exists.
	Ensure(g Addr) error
	// Assign moves one task into the group, after checking it is not in another class.
	Assign(g Addr, tid int) error
	// WriteTasks writes ids to the group's tasks file, one per write(2), handing each
	// write's result to result, which may stop the loop.
	WriteTasks(g Addr, ids []int, result func(id int, err error) error) error
	// Tasks lists the group's thread ids; ok is false when the group does not exist.
	Tasks(g Addr) (tids map[int]bool, ok bool)
	// Exists reports whether the group exists.
	Exists(g Addr) bool
	// Remove removes the group (its RMID is freed), whoever made it; one already gone is
	// no error.
	Remove(g Addr) error
	// LastCmdStatus is the kernel's word on the last failed command ("" if unreadable).
	LastCmdStatus() string
	// Counters reads every counter of the group: readings, and the counters with no sample
	// and why; a group that is gone is an error wrapping os.ErrNotExist.
	Counters(g Addr) ([]Reading, []Missing, error)
	// Assignment is the mount's counter assignment mode and counters (ReadAssignment).
	Assignment() (Assignment, error)
	// GroupAssignment is the group's assigned counters (ReadGroupAssignment).
	GroupAssignment(g Addr) (GroupAssignment, error)
	// WriteAssignment writes one assignment line to the group (WriteAssignment).
	WriteAssignment(g Addr, line string) error
}

// Kernel is Groups on a resctrl mount, through goresctrl's pkg/monitor.
type Kernel struct {
	root  string
	canon func(string) string
	mon   *monitor.Manager
	tasks *FileTaskWriter
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

func (k *Kernel) Counters(g Addr) ([]Reading, []Missing, error) {
	return k.counters.Read(filepath.Join(k.root, g.Path()))
}

func (k *Kernel) Assignment() (Assignment, error) { return ReadAssignment(k.root) }

func (k *Kernel) GroupAssignment(g Addr) (GroupAssignment, error) {
	return ReadGroupAssignment(k.root, g.Path())
}

func (k *Kernel) WriteAssignment(g Addr, line string) error {
	return WriteAssignment(k.root, g.Path(), line)
}

// Ensure is goresctrl's EnsureGroup: it tracks the group by name from then on.
func (k *Kernel) Ensure(g Addr) error {
	_, err := k.mon.EnsureGroup(g.Name, g.Class)
	return fromMonitor(err)
}

// Assign is goresctrl's AssignPID into the group it tracks by g's name.
func (k *Kernel) Assign(g Addr, tid int) error { return fromMonitor(k.mon.AssignPID(g.Name, tid)) }

// Remove is goresctrl's Remove for a group it tracks (made or found by this process); one it
// does not (made by another process since: a reconcile or a poststop ends groups a hook
// made) is removed by its rmdir here, instead of being made known to goresctrl first.
func (k *Kernel) Remove(g Addr) error {
	name := g.Name
	k.tasks.Forget(name)
	err := k.mon.Remove(name)
	if !errors.Is(err, monitor.ErrNotTracked) {
		return fromMonitor(err)
	}
	if k.canon != nil {
		name = k.canon(name)
	}
	p := filepath.Join(k.root, GroupPath(g.Class, name))
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

func (k *Kernel) Exists(g Addr) bool {
	_, err := os.Stat(filepath.Join(k.root, g.Path()))
	return err == nil
}

func (k *Kernel) Tasks(g Addr) (map[int]bool, bool) {
	b, err := os.ReadFile(filepath.Join(k.root, g.Path(), "tasks"))
	if err != nil {
		return map[int]bool{}, false
	}
	return ParseTasks(b), true
}

func (k *Kernel) WriteTasks(g Addr, ids []int, result func(id int, err error) error) error {
	return k.tasks.Write(g.Path(), ids, result)
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
