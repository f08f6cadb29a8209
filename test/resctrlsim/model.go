package resctrlsim

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

type groupKind uint8

const (
	kindRoot groupKind = iota // the default group: CLOSID 0, RMID 0
	kindCtrl                  // a CTRL_MON group made by mkdir at the root: its own CLOSID and RMID
	kindMon                   // a MON group in some mon_groups/: its own RMID, its parent's CLOSID
)

// group is one resctrl group. Nodes of the filesystem keep pointers to groups; a removed
// group is marked dead so an open handle or a cached inode cannot act on it.
type group struct {
	id       uint64 // unique for the simulator's life: inode numbers
	name     string
	kind     groupKind
	parent   *group // the control group of a MON group
	closid   int
	rmid     int
	ctrls    map[string]*group // root only
	mons     map[string]*group // root and control groups
	cpus     []int
	schemata string
	counters counters
	dead     bool
}

// ctrl is the control group whose CLOSID the group's tasks run with.
func (g *group) ctrl() *group {
	if g.kind == kindMon {
		return g.parent
	}
	return g
}

// Path is the group's path below the mount: "" for the root, "c1", "mon_groups/m1" or
// "c1/mon_groups/m1".
func (g *group) Path() string {
	switch g.kind {
	case kindCtrl:
		return g.name
	case kindMon:
		if g.parent.kind == kindRoot {
			return "mon_groups/" + g.name
		}
		return g.parent.name + "/mon_groups/" + g.name
	}
	return ""
}

// task is what the simulator knows of one thread. Threads it never saw fork and never
// moved are in the root group and need no entry until their CPU time is charged.
type task struct {
	tgid    int
	g       *group
	cpu     time.Duration // CPU time already charged to some group
	charged bool          // cpu is a real baseline (false: first sight of a task that predates us)
	exited  bool
}

// model is the simulated kernel state. Every operation takes mu, as the kernel takes
// rdtgroup_mutex, and first applies the task events queued so far, so it sees forks in the
// order they happened relative to its own writes.
type model struct {
	mu      sync.Mutex
	opts    Options
	host    Host
	root    *group
	nextID  uint64
	rmids   *idPool
	closids *idPool
	tasks   map[int]*task
	threads map[int]map[int]bool // tgid → tids with an entry in tasks
	lastCmd string
	// threshold is info/L3_MON/max_threshold_occupancy (limbo.go). It outlives a re-mount,
	// as the kernel's resctrl_rmid_realloc_threshold does.
	threshold uint64
	// ioAlloc is info/L3/io_alloc (ioalloc.go); it outlives a re-mount here, its CLOSID
	// reserved again.
	ioAlloc bool
	assign  assigner
	faults  faults
	stats   Stats
}

// Stats are the simulator's own health figures, shown by the control socket's status.
type Stats struct {
	Events          uint64 `json:"events"`           // proc connector events applied
	LostEvents      uint64 `json:"lost_events"`      // times the kernel dropped events (inheritance may be wrong)
	AmbiguousThread uint64 `json:"ambiguous_thread"` // new threads whose creator's group was unclear
	LimboPasses     uint64 `json:"limbo_passes"`     // runs of the limbo worker
}

func newModel(opts Options, host Host) *model {
	m := &model{
		opts:      opts,
		host:      host,
		lastCmd:   "ok",
		threshold: MaxThresholdOccupancy,
		assign:    newAssigner(opts),
	}
	m.resetLocked()
	return m
}

// resetLocked forgets every group, as unmounting and mounting resctrl again does.
func (m *model) resetLocked() {
	if m.root != nil {
		// rmdir_all_sub: every group's RMID is freed as an rmdir frees it, to limbo when
		// limbo is on; limbo outlives the mount.
		m.freeRMIDs(m.root, m.opts.now())
		m.markDead(m.root)
	} else {
		m.rmids = newIDPool(m.opts.groupRMIDs())
	}
	m.closids = newIDPool(m.opts.NumCLOSIDs)
	if m.ioAlloc {
		m.closids.take(m.ioAllocCLOSID())
	}
	m.root = m.newGroup("", kindRoot, nil, 0, 0)
	m.root.ctrls = map[string]*group{}
	m.root.cpus = onlineCPUs()
	m.tasks = map[int]*task{}
	m.threads = map[int]map[int]bool{}
	m.lastCmd = "ok"
	// Unmounting frees every counter; mounting gives the root its own (rdt_get_tree()). The
	// mode and mbm_assign_on_mkdir outlive the mount, as they do in the kernel.
	m.assign.freeAll(m.opts)
	m.assignOnCreate(m.root)
}

func (m *model) markDead(g *group) {
	g.dead = true
	for _, c := range g.ctrls {
		m.markDead(c)
	}
	for _, c := range g.mons {
		m.markDead(c)
	}
}

func (m *model) newGroup(name string, kind groupKind, parent *group, closid, rmid int) *group {
	m.nextID++
	g := &group{id: m.nextID, name: name, kind: kind, parent: parent, closid: closid, rmid: rmid,
		counters: newCounters(m.opts)}
	if kind != kindMon {
		g.mons = map[string]*group{}
		g.schemata = defaultSchemata(m.opts)
	}
	return g
}

// lock takes the model's mutex after applying the task events the kernel has queued.
func (m *model) lock() {
	m.mu.Lock()
	m.syncLocked()
}

func (m *model) unlock() { m.mu.Unlock() }

// lockTree takes the mutex for operations that read only the group tree (lookups, listings),
// which do not depend on task events.
func (m *model) lockTree() { m.mu.Lock() }

// fail records a failed command in last_cmd_status and returns its errno.
func (m *model) fail(errno syscall.Errno, format string, args ...any) syscall.Errno {
	m.lastCmd = fmt.Sprintf(format, args...)
	return errno
}

// mkdir creates a group: a control group when parent is the root, a monitoring group when
// parent's mon_groups/ is the directory. Like rdtgroup_mkdir, a name with a newline is
// refused, and running out of RMIDs (or CLOSIDs) says so in last_cmd_status.
func (m *model) mkdir(parent *group, name string, monGroup bool) (*group, syscall.Errno) {
	m.lastCmd = "ok"
	if parent.dead {
		return nil, syscall.ENOENT
	}
	if errno := m.faults.take(OpMkdir); errno != 0 {
		return nil, m.injected(OpMkdir, errno)
	}
	if strings.ContainsRune(name, '\n') {
		return nil, syscall.EINVAL
	}
	if monGroup {
		if _, ok := parent.mons[name]; ok {
			return nil, syscall.EEXIST
		}
		rmid, err := m.rmids.alloc()
		if err != nil {
			return nil, m.fail(errnoOf(err), "Out of RMIDs")
		}
		g := m.newGroup(name, kindMon, parent, parent.closid, rmid)
		parent.mons[name] = g
		m.assignOnCreate(g)
		return g, 0
	}
	if parent.kind != kindRoot {
		return nil, syscall.EPERM
	}
	if _, ok := parent.ctrls[name]; ok || isRootFile(name, m.opts) {
		return nil, syscall.EEXIST
	}
	closid, err := m.closids.alloc()
	if err != nil {
		return nil, m.fail(errnoOf(err), "Out of CLOSIDs")
	}
	rmid, err := m.rmids.alloc()
	if err != nil {
		m.closids.release(closid)
		return nil, m.fail(errnoOf(err), "Out of RMIDs")
	}
	g := m.newGroup(name, kindCtrl, m.root, closid, rmid)
	parent.ctrls[name] = g
	m.assignOnCreate(g)
	return g, 0
}

// rmdir removes a group. Its tasks go back to the parent control group (for a control
// group: to the root), its RMIDs are freed (to limbo when limbo is on, see limbo.go).
func (m *model) rmdir(g *group) syscall.Errno {
	m.lastCmd = "ok"
	if g.dead {
		return syscall.ENOENT
	}
	if g.kind == kindRoot {
		return syscall.EPERM
	}
	if errno := m.faults.take(OpRmdir); errno != 0 {
		return m.injected(OpRmdir, errno)
	}
	now := m.opts.now()
	to := g.parent // a MON group's tasks stay in its control group
	if g.kind == kindCtrl {
		to = m.root
	}
	m.settleGroup(g)
	for _, t := range m.tasks {
		if t.g == g || (t.g != nil && t.g.parent == g) {
			t.g = to
		}
	}
	m.releaseCntrs(g)
	m.freeRMIDs(g, now)
	if g.kind == kindCtrl {
		m.closids.release(g.closid)
		delete(m.root.ctrls, g.name)
	} else {
		delete(g.parent.mons, g.name)
	}
	m.markDead(g)
	return 0
}

func errnoOf(err error) syscall.Errno {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return syscall.EIO
}

// isRootFile reports whether name is taken by a file or directory the kernel puts at the
// root, so mkdir of it fails with EEXIST.
func isRootFile(name string, o Options) bool {
	for _, e := range groupEntries(kindRoot, o) {
		if e.name == name {
			return true
		}
	}
	return false
}

func sortedGroups(m map[string]*group) []*group {
	out := make([]*group, 0, len(m))
	for _, g := range m {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b *group) int { return strings.Compare(a.name, b.name) })
	return out
}
