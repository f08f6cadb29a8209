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
// their tasks, a fixed number of RMIDs. For unit tests of pure logic (no root, no FUSE);
// the simulator tests the real file operations.
type fakeResctrl struct {
	mu     sync.Mutex
	rmids  int
	groups map[string]map[int]bool // path → tasks
	paths  map[string]string       // name → path
	last   string
	// keep: tasks written stay in the group. Off, a write succeeds and is forgotten, as if
	// the container's processes had ended (tests that run many pods on one pid).
	keep bool
}

var _ resctrlfs.Groups = (*fakeResctrl)(nil)

func newFake(rmids int) *fakeResctrl {
	return &fakeResctrl{rmids: rmids, groups: map[string]map[int]bool{}, paths: map[string]string{}, last: "ok", keep: true}
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
	f.groups[p], f.paths[name] = map[int]bool{}, p
	return nil
}

func (f *fakeResctrl) Assign(name string, tid int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	g, ok := f.groups[f.paths[name]]
	if !ok {
		return fmt.Errorf("group %s: %w", name, monitor.ErrNotTracked)
	}
	for _, other := range f.groups {
		delete(other, tid)
	}
	if f.keep {
		g[tid] = true
	}
	return nil
}

func (f *fakeResctrl) WriteTasks(path string, ids []int, result func(int, error) error) error {
	name := filepath.Base(path)
	for _, id := range ids {
		if err := result(id, f.Assign(name, id)); err != nil {
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
	delete(f.groups, f.paths[name])
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
