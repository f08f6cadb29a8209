package hook

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unsafe"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/aside"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// errNotJoin: the group a join expected is gone; the worker places the container. It is
// lifecycle's ErrGroupGone, so Place takes the container back without recording a failure.
var errNotJoin = fmt.Errorf("%w: not a join", lifecycle.ErrGroupGone)

// join places a container whose pod's group is live (it has containers, or is idle within
// its retention; it is not pending and is of the container's class), most containers of a
// pod, in the hook's own process: the worker's start is a second start of this binary, most
// of what the hook costs. Resctrl's calls still run where the kernel may keep them: each in
// a vfork child that the hook leaves at its deadline (asideGroups). Everything else a join
// does is the registry on the state dir and /proc. ok is false when the call is not such a
// join, or when calls cannot run aside here: the worker handles it, from the start.
//
// Nothing here touches resctrl before the join is known to be one, not even the mount check
// (lifecycle.New's): a FUSE file system (the simulator) may be as slow to answer a statfs as
// a mkdir, and the worker checks the mount for everything else. A join needs no check of
// its own: its group was made through one, and is found again under the same root.
//
// deadline is when the hook stops waiting for resctrl; end, when its budget ends and the
// process with it. settle is called when the join waits for good (see asideGroups.park).
//
// A resctrl call that does not answer by the deadline (its child is killed there) leaves
// the join going on as far as it can without resctrl, the pod's record: a stat that hung
// is taken as the group being there, so the container is recorded like any other, and it
// waits for good only at the tasks write, outside the pod's lock. The hook's own mark, at
// its budget, then finds the lock free. A hung first stat marks the pod late there and
// then (Placement.Late): the container runs before anything moves it.
func join(st specs.State, cfg config.Config, open resctrlfs.Opener, log *slog.Logger, deadline, end time.Time, onGroup func(string), settle func()) (out lifecycle.Outcome, err error, ok bool) {
	// No state dir, no pod to join: nothing is made here for a call that is the worker's
	// (the runtime may have moved on, and its caller with it, while this goroutine runs).
	if _, err := registry.OpenReadOnly(cfg.StateDir); err != nil {
		return out, nil, false
	}
	g := &asideGroups{root: cfg.ResctrlRoot, mount: resctrlfs.MountFor(cfg.ResctrlSimulator), open: open, log: log, deadline: deadline, settle: settle}
	m, err := lifecycle.NewWith(cfg, log, g)
	if err != nil {
		return out, nil, false
	}
	m.CountAs(vocab.SourceHook)
	// A container refused before resctrl is the worker's to refuse, after its mount check,
	// as before: nothing is recorded here.
	p, out, err := placement(st, func(string, error) error { return errNotJoin })
	if err != nil {
		return out, nil, false
	}
	// A container not monitored (a sandbox, a pod opted out) is the worker's too: it says
	// so after its mount check, as before.
	group := m.GroupOf(p)
	if group == "" {
		return out, nil, false
	}
	rec, owned, err := m.Store().Load(group)
	// Its retention must outlast this whole process: Place ends an expired group and makes
	// it again, which is the worker's.
	if err != nil || !owned || !live(rec, p, time.Duration(cfg.Retention), end) {
		return out, nil, false
	}
	if g.calls, err = aside.NewCalls(); err != nil {
		return out, nil, false
	}
	defer g.calls.Close()
	// Its directory too (resctrl remounted, a runtime's RDT setup): a group that must be
	// made again is the worker's from the start, with nothing of the join to undo.
	if st, err := g.stat(rec.Path); errors.Is(err, aside.ErrStuck) {
		// The hook has given up on resctrl: the container is recorded all the same, in a
		// pod marked late, and reconcile completes it.
		p.Late = true
	} else if err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return out, nil, false
	}
	// Told only now, as the worker tells it before Place: a budget that runs out from here
	// finds the container recorded, and marks its pod late.
	onGroup(group)
	out, err = m.Place(p)
	if errors.Is(err, errNotJoin) {
		// Gone since (the pod ended meanwhile, under its lock): Place has taken the
		// container back and recorded the failure; the worker places it afresh.
		return out, nil, false
	}
	return out, err, true
}

// live says the record is of a group a container joins without making it: Place then asks
// resctrl only whether it is there and to write the tasks. An idle group (its last container
// left, a pod whose containers restart) is joined as a live one while its retention lasts
// past end: after it, Place would end the group and make it again.
func live(rec registry.Record, p lifecycle.Placement, retention time.Duration, end time.Time) bool {
	if rec.Pending != "" || rec.SandboxEnded || rec.Class != p.Class || rec.Path != lifecycle.GroupPath(p.Class, rec.Group) {
		return false
	}
	if len(rec.Containers) > 0 {
		return rec.IdleSince == nil
	}
	return rec.IdleSince != nil && rec.IdleSince.Add(retention).After(end)
}

// asideGroups is resctrl for a join in the hook's process: what a join asks of it (is the
// group there, the tasks writes, the kernel's last word) runs in a vfork child, so a call
// the kernel keeps holds that child, never the hook. At the deadline the child is killed
// (it writes no pid after it, one that may be another pod's by then); a stat still running
// then says the group is there (it is asked under the pod's lock, which must be let go), a
// tasks write keeps its caller waiting for good (park), out of the lock, as a worker would
// be kept: the hook has answered the runtime by then and ends. A group that is not there
// any more is not a join's to make.
type asideGroups struct {
	root     string
	mount    resctrlfs.Mount  // the configuration's mount check, for open
	open     resctrlfs.Opener // the binary's resctrl (goresctrl), for the class check only
	log      *slog.Logger
	kernel   resctrlfs.Groups // opened by open, at the first call that needs it
	calls    *aside.Calls
	deadline time.Time
	settle   func() // told when the join parks
	// found is the group Exists found last: Place asks Ensure for it next, under the same
	// pod lock, and the answer has not changed.
	found resctrlfs.Addr
}

var _ resctrlfs.Groups = (*asideGroups)(nil)

// run runs steps aside: aside.ErrStuck at the deadline.
func (g *asideGroups) run(steps []aside.Step, keep ...any) error {
	if g.calls == nil {
		return errNotJoin
	}
	return g.calls.Run(g.deadline, steps, keep...)
}

// park waits for good, once the hook has given up: the container is recorded, and nothing
// of it is to be undone. The hook is told (settle), so that it marks the pod late now
// rather than at the end of its wait.
func (g *asideGroups) park() {
	if g.settle != nil {
		g.settle()
	}
	select {}
}

// stat is newfstatat of path below the root, aside.
func (g *asideGroups) stat(path string) (unix.Stat_t, error) {
	var st unix.Stat_t
	p, err := unix.BytePtrFromString(filepath.Join(g.root, path))
	if err != nil {
		return st, err
	}
	steps := []aside.Step{{Trap: unix.SYS_NEWFSTATAT, Args: [4]uintptr{aside.AtFDCWD, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&st)), 0}}}
	if err := g.run(steps, p, &st); err != nil {
		return st, err
	}
	if e := steps[0].Errno; e != 0 {
		return st, &fs.PathError{Op: "stat", Path: filepath.Join(g.root, path), Err: e}
	}
	return st, nil
}

// Exists is asked under the pod's lock: a stat that did not answer by the deadline says
// yes, so that Place lets the lock go and parks at the tasks write (see asideGroups).
func (g *asideGroups) Exists(a resctrlfs.Addr) bool {
	st, err := g.stat(a.Path())
	if err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		g.found = a
	}
	return err == nil || errors.Is(err, aside.ErrStuck)
}

// Ensure adopts the group when it is there, as goresctrl does a group it finds.
func (g *asideGroups) Ensure(a resctrlfs.Addr) error {
	if a != g.found {
		st, err := g.stat(a.Path())
		if errors.Is(err, aside.ErrStuck) {
			// As Exists: the group is taken as there, out of the lock.
			return nil
		}
		if err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return errNotJoin
		}
	}
	return nil
}

// Assign is goresctrl's class check, made only once the kernel refused the init: it runs
// in the hook's process.
func (g *asideGroups) Assign(a resctrlfs.Addr, tid int) error {
	k, err := g.goresctrl()
	if err != nil {
		return err
	}
	if err := k.Ensure(a); err != nil {
		return err
	}
	return k.Assign(a, tid)
}

// Tasks, Counters and counter assignment: not asked by a join (the group is live, and
// neither made nor ended here, so it has no snapshot to write); goresctrl's if ever asked.
func (g *asideGroups) Tasks(a resctrlfs.Addr) (map[int]bool, bool) {
	k, err := g.goresctrl()
	if err != nil {
		return map[int]bool{}, false
	}
	return k.Tasks(a)
}

// Remove is asked by a join for the runtime's own group only (Placement.RuntimeGroup), never
// for the pod's: the rmdir runs aside like any resctrl call that may wait on its locks. One
// already gone is no error; one whose rmdir did not answer by the deadline is left to finish
// on its own (the container is placed by then).
func (g *asideGroups) Remove(a resctrlfs.Addr) error {
	path := filepath.Join(g.root, a.Path())
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	steps := []aside.Step{{Trap: unix.SYS_UNLINKAT, Args: [4]uintptr{aside.AtFDCWD, uintptr(unsafe.Pointer(p)), unix.AT_REMOVEDIR}}}
	if err := g.run(steps, p); err != nil {
		return err
	}
	if e := steps[0].Errno; e != 0 && e != syscall.ENOENT {
		return &fs.PathError{Op: "rmdir", Path: path, Err: e}
	}
	return nil
}

func (g *asideGroups) Counters(a resctrlfs.Addr) ([]resctrlfs.Reading, []resctrlfs.Missing, error) {
	k, err := g.goresctrl()
	if err != nil {
		return nil, nil, err
	}
	return k.Counters(a)
}

func (g *asideGroups) Assignment() (resctrlfs.Assignment, error) {
	k, err := g.goresctrl()
	if err != nil {
		return resctrlfs.Assignment{}, err
	}
	return k.Assignment()
}

func (g *asideGroups) GroupAssignment(a resctrlfs.Addr) (resctrlfs.GroupAssignment, error) {
	k, err := g.goresctrl()
	if err != nil {
		return resctrlfs.GroupAssignment{}, err
	}
	return k.GroupAssignment(a)
}

func (g *asideGroups) WriteAssignment(a resctrlfs.Addr, line string) error {
	k, err := g.goresctrl()
	if err != nil {
		return err
	}
	return k.WriteAssignment(a, line)
}

func (g *asideGroups) goresctrl() (resctrlfs.Groups, error) {
	if g.kernel == nil {
		k, err := lifecycle.OpenResctrl(g.open, g.root, g.mount, g.log)
		if err != nil {
			return nil, err
		}
		g.kernel = k
	}
	return g.kernel, nil
}

// WriteTasks writes the ids aside (resctrlfs.AsideTaskWriter), until the deadline: past it,
// which ids were written is unknown, and the hook has given up; the container stays
// recorded, its pod marked late, for reconcile to complete, and the join parks.
func (g *asideGroups) WriteTasks(a resctrlfs.Addr, ids []int, result func(id int, err error) error) error {
	if g.calls == nil {
		return errNotJoin
	}
	w := resctrlfs.AsideTaskWriter{Root: g.root, Calls: g.calls, Deadline: g.deadline}
	err := w.Write(a.Path(), ids, result)
	if errors.Is(err, aside.ErrStuck) {
		g.park()
	}
	return err
}

// LastCmdStatus is the kernel's last word, read aside ("" when it cannot be read, by the
// deadline too: it only adds words to an error).
func (g *asideGroups) LastCmdStatus() string {
	p, err := unix.BytePtrFromString(filepath.Join(g.root, "info", "last_cmd_status"))
	if err != nil {
		return ""
	}
	buf := make([]byte, 4097)
	steps := []aside.Step{
		{Trap: unix.SYS_OPENAT, Args: [4]uintptr{aside.AtFDCWD, uintptr(unsafe.Pointer(p)), unix.O_RDONLY | unix.O_CLOEXEC}, Stop: true},
		{Trap: unix.SYS_READ, FdOf: 1, Args: [4]uintptr{0, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))}},
	}
	if err := g.run(steps, p, buf); err != nil || steps[1].Errno != 0 || !steps[1].Ran || steps[1].R1 > 4096 {
		return ""
	}
	return strings.TrimSpace(string(buf[:steps[1].R1]))
}
