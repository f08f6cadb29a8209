package resctrlsim

import (
	"errors"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim/procevents"
)

// fakeHost is a scripted host for unit tests of the model's pure logic: which threads exist,
// their CPU time, and the events queued for the next sync.
type fakeHost struct {
	threads map[int]int // tid → tgid
	cpu     map[int]time.Duration
	queue   []procevents.Event
}

func newFakeHost() *fakeHost {
	return &fakeHost{threads: map[int]int{}, cpu: map[int]time.Duration{}}
}

func (h *fakeHost) Events(fn func(procevents.Event)) error {
	q := h.queue
	h.queue = nil
	for _, ev := range q {
		fn(ev)
	}
	return nil
}
func (h *fakeHost) WaitEvents(time.Duration) bool { return false }
func (h *fakeHost) Threads() ([]Thread, error) {
	var out []Thread
	for tid, tgid := range h.threads {
		out = append(out, Thread{Tid: tid, Tgid: tgid})
	}
	return out, nil
}
func (h *fakeHost) Stat(tid int) (TaskStat, bool) {
	if _, ok := h.threads[tid]; !ok {
		return TaskStat{}, false
	}
	return TaskStat{CPUTime: h.cpu[tid]}, true
}
func (h *fakeHost) Alive(tid int) bool       { _, ok := h.threads[tid]; return ok }
func (h *fakeHost) Tgid(tid int) (int, bool) { tgid, ok := h.threads[tid]; return tgid, ok }
func (h *fakeHost) Lost() uint64             { return 0 }
func (h *fakeHost) Close() error             { return nil }

func (h *fakeHost) fork(parent, parentTgid, child, childTgid int) {
	h.threads[child] = childTgid
	h.queue = append(h.queue, procevents.Event{Kind: procevents.Fork, Pid: child, Tgid: childTgid, ParentPid: parent, ParentTgid: parentTgid})
}

func (h *fakeHost) exit(tid, tgid int) {
	delete(h.threads, tid)
	h.queue = append(h.queue, procevents.Event{Kind: procevents.Exit, Pid: tid, Tgid: tgid})
}

func newTestModel(h *fakeHost) *model {
	return newModel(Options{}.withDefaults(), h)
}

func (m *model) tasksOf(t *testing.T, g *group) []int {
	t.Helper()
	m.lock()
	defer m.unlock()
	ids, errno := m.listTasks(g)
	if errno != 0 {
		t.Fatal(errno)
	}
	return ids
}

func (m *model) mustMkdir(t *testing.T, name string) *group {
	t.Helper()
	m.lock()
	defer m.unlock()
	g, errno := m.mkdir(m.root, name, true)
	if errno != 0 {
		t.Fatal(errno)
	}
	return g
}

func (m *model) move(g *group, tid int) syscall.Errno {
	m.lock()
	defer m.unlock()
	return m.writeTasks(g, []byte(itoa(tid)), 1)
}

// A non-leader thread that calls execve takes over the leader's id and keeps its own group.
func TestExecByNonLeaderKeepsTheCallersGroup(t *testing.T) {
	t.Parallel()
	h := newFakeHost()
	h.threads[100] = 100
	m := newTestModel(h)
	g := m.mustMkdir(t, "g")
	h.fork(1, 1, 101, 100) // a second thread, born in the root
	if errno := m.move(g, 101); errno != 0 {
		t.Fatal(errno)
	}
	// Thread 101 execs: the leader 100 is reported exiting, then 101 becomes 100.
	h.exit(100, 100)
	delete(h.threads, 101)
	h.threads[100] = 100
	h.queue = append(h.queue, procevents.Event{Kind: procevents.Exec, Pid: 100, Tgid: 100})
	if got := m.tasksOf(t, g); !slices.Equal(got, []int{100}) {
		t.Errorf("after the exec the group holds %v, want [100]", got)
	}
}

// A leader that execs itself keeps its group; its other threads are gone.
func TestExecByLeader(t *testing.T) {
	t.Parallel()
	h := newFakeHost()
	h.threads[200] = 200
	m := newTestModel(h)
	g := m.mustMkdir(t, "g")
	if errno := m.move(g, 200); errno != 0 {
		t.Fatal(errno)
	}
	h.fork(1, 1, 201, 200)
	h.exit(201, 200)
	h.queue = append(h.queue, procevents.Event{Kind: procevents.Exec, Pid: 200, Tgid: 200})
	if got := m.tasksOf(t, g); !slices.Equal(got, []int{200}) {
		t.Errorf("group holds %v, want [200]", got)
	}
}

// When the threads of a process sit in different groups, a new thread's creator is unknown:
// the leader's group is used and the guess is counted.
func TestAmbiguousThreadCreation(t *testing.T) {
	t.Parallel()
	h := newFakeHost()
	h.threads[300], h.threads[301] = 300, 300
	m := newTestModel(h)
	g := m.mustMkdir(t, "g")
	if errno := m.move(g, 300); errno != 0 {
		t.Fatal(errno)
	}
	h.fork(1, 1, 302, 300)
	m.lock()
	m.track(301, 300, m.root, false) // known, and in another group than the leader
	m.unlock()
	h.fork(1, 1, 303, 300)
	if got := m.tasksOf(t, g); !slices.Equal(got, []int{300, 302, 303}) {
		t.Errorf("group holds %v, want [300 302 303]", got)
	}
	if m.stats.AmbiguousThread != 1 {
		t.Errorf("ambiguous thread creations counted: %d, want 1", m.stats.AmbiguousThread)
	}
}

// CPU time is charged to the group a task was in while it used it.
func TestChargeOnMove(t *testing.T) {
	t.Parallel()
	h := newFakeHost()
	m := newTestModel(h)
	a, b := m.mustMkdir(t, "a"), m.mustMkdir(t, "b")
	h.fork(1, 1, 400, 400) // born now: all its CPU time is ours to charge
	h.threads[1] = 1
	if errno := m.move(a, 400); errno != 0 { // forked in the root, moved at once
		t.Fatal(errno)
	}
	h.cpu[400] = time.Second
	if errno := m.move(b, 400); errno != 0 {
		t.Fatal(errno)
	}
	h.cpu[400] = 3 * time.Second
	m.lock()
	m.settleGroup(b)
	m.unlock()
	perSecond := m.opts.Rates.MBMTotalBytesPerCPUSecond
	if got := a.counters.l3[0].total; got != perSecond {
		t.Errorf("a counted %v bytes, want one CPU second's %v", got, perSecond)
	}
	if got := b.counters.l3[0].total; got != 2*perSecond {
		t.Errorf("b counted %v bytes, want two CPU seconds' %v", got, 2*perSecond)
	}
}

func TestIDPoolLimbo(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	p := newIDPool(3, time.Second)
	a, _ := p.alloc(now)
	b, _ := p.alloc(now)
	if _, err := p.alloc(now); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("alloc with none free: %v, want ENOSPC", err)
	}
	p.release(a, now)
	if _, err := p.alloc(now); !errors.Is(err, syscall.EBUSY) {
		t.Fatalf("alloc with only a dirty id: %v, want EBUSY", err)
	}
	got, err := p.alloc(now.Add(time.Second))
	if err != nil || got != a {
		t.Fatalf("alloc after limbo: %d, %v, want %d", got, err, a)
	}
	_ = b
}
