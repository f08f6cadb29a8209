package resctrlfs

import (
	"log/slog"
	"strconv"
	"strings"
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

// Opener opens Groups on the resctrl mount at root: the implementation's Open
// (lib/resctrlfs/kernel, goresctrl's pkg/monitor behind it), handed in by the binaries, so
// that nothing but them and the implementation links goresctrl. mount is the mount check
// (MountFor the configuration; nil is Check); valid and canon are the group names the
// caller owns and their canonical form; log receives the implementation's own messages.
type Opener func(root string, mount Mount, valid func(string) bool, canon func(string) string, log *slog.Logger) (Groups, error)

// GroupPath is a monitoring group's path below the resctrl root: under the root group's
// mon_groups, or under its class's.
func GroupPath(class, name string) string {
	if class == "" {
		return "mon_groups/" + name
	}
	return class + "/mon_groups/" + name
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
