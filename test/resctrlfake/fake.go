package resctrlfake

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// Resctrl is resctrl in memory. Every method is safe for concurrent use.
type Resctrl struct {
	mu      sync.Mutex
	rmids   int
	groups  map[string]*group // by path; the root group is not among them
	paths   map[string]string // name → path
	class   map[int]string    // task → its class, when not the root
	last    string
	forget  bool
	tree    string // the fixture tree every group's counters are read from ("": none)
	reader  resctrlfs.MonReader
	assign  assigner
	faults  map[Op]fault
	removed []string // groups' paths as they were removed, in order
	// freed is every RMID a removal freed, in order, with what Limbo reads of it.
	freed []freedRMID
	// occupancy is a test's llc_occupancy for a path (SetOccupancy), which follows the
	// group's RMID into limbo, as the simulator's counter command does.
	occupancy map[string]uint64
}

type group struct {
	class    string
	tasks    map[int]bool
	readings []resctrlfs.Reading // set by SetCounters; nil: the tree's
	missing  []resctrlfs.Missing
	set      bool
}

var _ resctrlfs.Groups = (*Resctrl)(nil)

// New is a resctrl with rmids RMIDs for monitoring groups (the root group's is apart), no
// counter assignment (a kernel before 6.18) and no counters until UseTree or SetCounters.
func New(rmids int) *Resctrl {
	return &Resctrl{rmids: rmids, groups: map[string]*group{}, paths: map[string]string{},
		class: map[int]string{}, last: "ok", faults: map[Op]fault{}}
}

// ForgetTasks makes every tasks write succeed and be forgotten, as if the written processes
// ended at once: tests that place many containers with one pid of their own.
func (f *Resctrl) ForgetTasks() { f.mu.Lock(); f.forget = true; f.mu.Unlock() }

// JoinClass writes tid into class's own tasks ("" the root), as a runtime does for a
// container's init: the task leaves any monitoring group it was in.
func (f *Resctrl) JoinClass(tid int, class string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, g := range f.groups {
		delete(g.tasks, tid)
	}
	if class == "" {
		delete(f.class, tid)
		return
	}
	f.class[tid] = class
}

// Count is the number of monitoring groups (RMIDs in use).
func (f *Resctrl) Count() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.groups) }

// Removed lists the groups' paths in the order they were removed.
func (f *Resctrl) Removed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.removed...)
}

// Ensure is mkdir, or adopting the group that is there. A new group in mbm_event mode gets
// counters as the kernel gives them at mkdir (see SetAssignMode). A name already made under
// another class is refused, as goresctrl refuses it (with its words).
func (f *Resctrl) Ensure(g resctrlfs.Addr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	name, class, p := g.Name, g.Class, g.Path()
	if old, ok := f.paths[name]; ok && old != p {
		was, _ := resctrlfs.ParseAddr(old) // the group may be gone (Remount): goresctrl still tracks it
		return fmt.Errorf("key %q already tracked under rdtClass %q, cannot reassign to %q", name, was.Class, class)
	}
	if _, ok := f.groups[p]; ok {
		f.paths[name] = p
		return nil
	}
	f.last = "ok" // every command clears last_cmd_status (a mkdir that finds the group is none)
	if err := f.fault(OpMkdir, p); err != nil {
		return err
	}
	if len(f.groups) >= f.rmids {
		f.last = "Out of RMIDs"
		return fmt.Errorf("%w (key %s): %w", resctrlfs.ErrNoRMID, name, syscall.ENOSPC)
	}
	f.groups[p], f.paths[name] = &group{class: class, tasks: map[int]bool{}}, p
	f.assign.onCreate(p)
	return nil
}

// Assign is goresctrl's AssignPID: its class check, then the kernel's write, into the group
// this process tracks by a's name (goresctrl's key), as lib/resctrlfs/kernel's Assign.
func (f *Resctrl) Assign(a resctrlfs.Addr, tid int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := a.Name
	p := f.paths[name]
	g, ok := f.groups[p]
	if !ok {
		return fmt.Errorf("group %s: %w", name, resctrlfs.ErrNotTracked)
	}
	if cur := f.class[tid]; cur != "" && cur != g.class {
		label := g.class
		if label == "" {
			label = "(root)"
		}
		return fmt.Errorf("%w: pid belongs to a different control group: pid %d is in control group %q but mon_group %q is under %q",
			resctrlfs.ErrClassMismatch, tid, cur, name, label)
	}
	return f.write(p, tid)
}

// write is the kernel's tasks write into the group at p (f.mu held): a task moves only
// within its class ("Can't move task to different control group").
func (f *Resctrl) write(p string, tid int) error {
	g, ok := f.groups[p]
	if !ok {
		return fmt.Errorf("write %s/tasks: %w", p, syscall.ENOENT)
	}
	f.last = "ok"
	if err := f.fault(OpTasksWrite, p); err != nil {
		return err
	}
	if f.class[tid] != g.class {
		f.last = "Can't move task to different control group"
		return fmt.Errorf("write %s/tasks: %w", p, syscall.EINVAL)
	}
	for _, other := range f.groups {
		delete(other.tasks, tid)
	}
	if !f.forget {
		g.tasks[tid] = true
	}
	return nil
}

// WriteTasks is the kernel's writes through one open tasks file: no class check of its own.
// A group that is not there (or no longer, between two writes) is the open's error,
// returned without a result, as a resctrlfs.TaskWriter returns it when it cannot open the
// file (again, after a write to a removed group).
func (f *Resctrl) WriteTasks(g resctrlfs.Addr, ids []int, result func(int, error) error) error {
	path := g.Path()
	for _, id := range ids {
		f.mu.Lock()
		_, ok := f.groups[path]
		var err error
		if ok {
			err = f.write(path, id)
		}
		f.mu.Unlock()
		if !ok {
			return &os.PathError{Op: "open", Path: path + "/tasks", Err: syscall.ENOENT}
		}
		if err := result(id, err); err != nil {
			return err
		}
	}
	return nil
}

func (f *Resctrl) Tasks(a resctrlfs.Addr) (map[int]bool, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g, ok := f.groups[a.Path()]
	out := map[int]bool{}
	if ok {
		for t := range g.tasks {
			out[t] = true
		}
	}
	return out, ok
}

func (f *Resctrl) Exists(g resctrlfs.Addr) bool { _, ok := f.Tasks(g); return ok }

// Remove is rmdir of the group at a, whoever made it, as lib/resctrlfs/kernel's Remove: the
// group this process tracks under a's name (goresctrl's), else the one at a (another
// process's); one already gone is no error. The group's tasks go back to its class's own
// group (their class stays), its counters are freed.
func (f *Resctrl) Remove(a resctrlfs.Addr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := a.Name
	p, tracked := f.paths[name]
	if !tracked {
		p = a.Path()
	}
	g, ok := f.groups[p]
	if !ok {
		delete(f.paths, name)
		return nil
	}
	f.last = "ok"
	if err := f.fault(OpRmdir, p); err != nil {
		return err
	}
	delete(f.groups, p)
	delete(f.paths, name)
	f.assign.release(p)
	f.removed = append(f.removed, p)
	f.free(p, g)
	return nil
}

func (f *Resctrl) LastCmdStatus() string { f.mu.Lock(); defer f.mu.Unlock(); return f.last }

// UseTree makes every group's counters those of the fixture tree at dir (a directory holding
// mon_data, see Tree), read by the project's own reader: what a snapshot or the counter
// policy sees is what it would parse from the kernel's files.
func (f *Resctrl) UseTree(dir string) { f.mu.Lock(); f.tree = dir; f.mu.Unlock() }

// SetCounters gives the group at path its own counters, in place of the tree's.
func (f *Resctrl) SetCounters(path string, readings []resctrlfs.Reading, missing []resctrlfs.Missing) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if g, ok := f.groups[path]; ok {
		g.readings, g.missing, g.set = readings, missing, true
	}
}

// Counters reads the group's counters: those SetCounters gave, as given, else the tree's.
// A group that is not there is an error wrapping os.ErrNotExist, as the kernel's missing
// directory. In mbm_event mode a tree's bandwidth counter (mbm_total_bytes, mbm_local_bytes
// of an L3 domain) the group holds no counter for reads "Unassigned", as the kernel's (and
// the simulator's) does, whatever the tree says.
func (f *Resctrl) Counters(a resctrlfs.Addr) ([]resctrlfs.Reading, []resctrlfs.Missing, error) {
	path := a.Path()
	f.mu.Lock()
	g, ok := f.groups[path]
	tree := f.tree
	var set bool
	var readings []resctrlfs.Reading
	var missing []resctrlfs.Missing
	if ok {
		set, readings, missing = g.set, g.readings, g.missing
	}
	var held map[string][]string // L3 domain id → events with a counter; nil: not counting
	if f.assign.mode == resctrlfs.AssignModeEvent {
		held = map[string][]string{}
		for d, evs := range f.assign.held[path] {
			held[d] = slices.Clone(evs)
		}
	}
	err := f.fault(OpCounters, path)
	f.mu.Unlock()
	switch {
	case !ok:
		return nil, nil, &os.PathError{Op: "open", Path: path + "/mon_data", Err: os.ErrNotExist}
	case err != nil:
		return nil, nil, err
	case set:
		return f.occupied(path, readings), append([]resctrlfs.Missing(nil), missing...), nil
	case tree == "":
		return f.occupied(path, nil), nil, nil
	}
	readings, missing, err = f.reader.Read(tree)
	readings = f.occupied(path, readings)
	if err != nil || held == nil {
		return readings, missing, err
	}
	unassigned := func(domain, name string) bool {
		res, id, err := resctrlfs.DomainID(domain)
		return err == nil && res == "L3" && slices.Contains(events, name) && !slices.Contains(held[id], name)
	}
	var out []resctrlfs.Reading
	for _, r := range readings {
		if unassigned(r.Domain, r.Name) {
			missing = append(missing, resctrlfs.Missing{Domain: r.Domain, Name: r.Name, Reason: "Unassigned"})
			continue
		}
		out = append(out, r)
	}
	for i, m := range missing {
		if unassigned(m.Domain, m.Name) {
			missing[i].Reason = "Unassigned"
		}
	}
	return out, missing, nil
}
