package resctrlfake

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"syscall"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// What happens to resctrl outside the process under test, for tests that must set it up the
// way another tool, a remount or a runtime leaves it.

// Mkdir is another process's mkdir of the monitoring group at path ("mon_groups/<name>" or
// "<class>/mon_groups/<name>"): another tool's group, or ours made by an earlier process. It
// takes an RMID as any group does, but its name is not tracked here (goresctrl tracks only
// what this process made or found), so nothing of ours knows it until it looks.
func (f *Resctrl) Mkdir(path string) error {
	g, err := resctrlfs.ParseAddr(path)
	if err != nil {
		return fmt.Errorf("mkdir %s: not a monitoring group's path (mon_groups/<name> or <class>/mon_groups/<name>): %w", path, syscall.EINVAL)
	}
	name := g.Name
	f.mu.Lock()
	if _, ok := f.groups[path]; ok {
		f.mu.Unlock()
		return &os.PathError{Op: "mkdir", Path: path, Err: syscall.EEXIST}
	}
	old, tracked := f.paths[name]
	delete(f.paths, name)
	f.mu.Unlock()
	err = f.Ensure(g)
	f.mu.Lock()
	if tracked {
		f.paths[name] = old
	} else {
		delete(f.paths, name)
	}
	f.mu.Unlock()
	return err
}

// Remount is resctrl unmounted and mounted again (or reset by a runtime's RDT setup): every
// group is gone with its RMID and counters, and every task is in the root group, its class
// gone too. Each group is listed in Removed, in path order, as if removed. The names this
// process tracks stay tracked: that is goresctrl's memory, not the kernel's.
func (f *Resctrl) Remount() {
	f.mu.Lock()
	defer f.mu.Unlock()
	gone := slices.Sorted(maps.Keys(f.groups))
	for _, p := range gone {
		f.assign.release(p)
		f.free(p, f.groups[p])
	}
	clear(f.groups)
	clear(f.class)
	f.removed = append(f.removed, gone...)
}

// GroupOf is where tid is, as the tasks files say: the path of the monitoring group that
// holds it, else its class's own group ("gold"; "" the root group, where every task the fake
// was never told of is).
func (f *Resctrl) GroupOf(tid int) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for p, g := range f.groups {
		if g.tasks[tid] {
			return p
		}
	}
	return f.class[tid]
}

// GroupPaths lists every monitoring group's path, sorted.
func (f *Resctrl) GroupPaths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.groups))
}

// RuntimeGroup is what runc ≥ 1.4 does for a container whose spec sets
// linux.intelRdt.enableMonitoring, before any hook runs (libcontainer/intelrdt Apply): it
// makes <class>/mon_groups/<container id>, taking a group already there as is, and writes the
// init's pid into it. The pid must be in class already (JoinClass), as runc wrote it into
// the class's tasks first. It returns the group's path.
func (f *Resctrl) RuntimeGroup(class, containerID string, pid int) (string, error) {
	p := "mon_groups/" + containerID
	if class != "" {
		p = class + "/" + p
	}
	if err := f.Mkdir(p); err != nil && !os.IsExist(err) {
		return p, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return p, f.write(p, pid)
}

// At is the group at path ("mon_groups/<name>" or "<class>/mon_groups/<name>"), for tests
// that name groups as resctrl and Outcome.Group show them. A path that is no group's is a
// mistake of the test's: it panics.
func At(path string) resctrlfs.Addr {
	a, err := resctrlfs.ParseAddr(path)
	if err != nil {
		panic(err)
	}
	return a
}
