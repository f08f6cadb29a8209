package lifecycle

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/intel/goresctrl/pkg/monitor"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// fakeResctrl is resctrl as lifecycle's decisions see it, in memory: groups by path with
// their tasks, a fixed number of RMIDs, and allocation classes as the kernel has them: every
// task is in one class (the root unless joinClass moved it), a monitoring group takes only
// tasks of its own class (EINVAL, "Can't move task to different control group"), and
// Assign, goresctrl's AssignPID, refuses a task of another non-root class before it writes
// (monitor.ErrClassMismatch). For unit tests of pure logic (no root, no FUSE); the
// simulator tests the real file operations.
type fakeResctrl struct {
	mu      sync.Mutex
	rmids   int
	groups  map[string]map[int]bool // path → tasks
	paths   map[string]string       // name → path
	classOf map[string]string       // path → the group's class
	class   map[int]string          // task → its class, when not the root
	last    string
	// keep: tasks written stay in the group. Off, a write succeeds and is forgotten, as if
	// the container's processes had ended (tests that run many pods on one pid).
	keep bool
}

var _ resctrlfs.Groups = (*fakeResctrl)(nil)

func newFake(rmids int) *fakeResctrl {
	return &fakeResctrl{rmids: rmids, groups: map[string]map[int]bool{}, paths: map[string]string{},
		classOf: map[string]string{}, class: map[int]string{}, last: "ok", keep: true}
}

// joinClass writes tid into class's own tasks ("" the root), as a runtime does for a
// container's init: the task leaves any monitoring group it was in.
func (f *fakeResctrl) joinClass(tid int, class string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, g := range f.groups {
		delete(g, tid)
	}
	if class == "" {
		delete(f.class, tid)
		return
	}
	f.class[tid] = class
}

func (f *fakeResctrl) Ensure(name, class string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := GroupPath(class, name)
	if _, ok := f.groups[p]; ok {
		f.paths[name] = p
		return nil
	}
	if len(f.groups) >= f.rmids {
		f.last = "Out of RMIDs"
		return fmt.Errorf("%w (key %s): %w", monitor.ErrNoRMIDs, name, syscall.ENOSPC)
	}
	f.groups[p], f.paths[name], f.classOf[p] = map[int]bool{}, p, class
	return nil
}

// Assign is goresctrl's AssignPID: its class check, then the kernel's write.
func (f *fakeResctrl) Assign(name string, tid int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.paths[name]
	if _, ok := f.groups[p]; !ok {
		return fmt.Errorf("group %s: %w", name, monitor.ErrNotTracked)
	}
	if cur := f.class[tid]; cur != "" && cur != f.classOf[p] {
		return fmt.Errorf("%w: pid %d is in control group %q but mon_group %q is under %q",
			monitor.ErrClassMismatch, tid, cur, name, ClassLabel(f.classOf[p]))
	}
	return f.write(p, tid)
}

// write is the kernel's tasks write into the group at p (f.mu held).
func (f *fakeResctrl) write(p string, tid int) error {
	g, ok := f.groups[p]
	if !ok {
		return fmt.Errorf("write %s/tasks: %w", p, syscall.ENOENT)
	}
	if f.class[tid] != f.classOf[p] {
		f.last = "Can't move task to different control group"
		return fmt.Errorf("write %s/tasks: %w", p, syscall.EINVAL)
	}
	for _, other := range f.groups {
		delete(other, tid)
	}
	if f.keep {
		g[tid] = true
	}
	return nil
}

// WriteTasks is the kernel's writes through one open tasks file: no class check of its own.
func (f *fakeResctrl) WriteTasks(path string, ids []int, result func(int, error) error) error {
	for _, id := range ids {
		f.mu.Lock()
		err := f.write(path, id)
		f.mu.Unlock()
		if err := result(id, err); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeResctrl) Tasks(path string) (map[int]bool, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g, ok := f.groups[path]
	out := map[int]bool{}
	for t := range g {
		out[t] = true
	}
	return out, ok
}

func (f *fakeResctrl) Exists(path string) bool { _, ok := f.Tasks(path); return ok }

func (f *fakeResctrl) Remove(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	// The group's tasks go back to its class's own group: their class stays.
	delete(f.groups, f.paths[name])
	delete(f.classOf, f.paths[name])
	delete(f.paths, name)
	return nil
}

func (f *fakeResctrl) LastCmdStatus() string { f.mu.Lock(); defer f.mu.Unlock(); return f.last }
func (f *fakeResctrl) Root() string          { return "/nonexistent-resctrl" }

func (f *fakeResctrl) count() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.groups) }

// newFakeEnv is newEnv on the in-memory resctrl: no root, no FUSE.
func newFakeEnv(t *testing.T, rmids int, edit func(*config.Config)) (*env, *fakeResctrl) {
	t.Helper()
	fake := newFake(rmids)
	cfg := config.Default()
	cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir, cfg.Log = fake.Root(), filepath.Join(t.TempDir(), "state"), "", "stderr"
	if edit != nil {
		edit(&cfg)
	}
	m, err := NewWith(cfg, slog.New(slog.DiscardHandler), fake)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, cfg: cfg, m: m, now: time.Now()}
	m.SetClock(func() time.Time { return e.now })
	return e, fake
}

func uid(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

func fakeCrio(pod string) map[string]string { return crio(pod, strings.Repeat("c", 64)) }
