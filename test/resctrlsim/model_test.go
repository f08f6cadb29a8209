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

// The pool as alloc_rmid sees it: ENOSPC with none free, EBUSY with only dirty ones, and a
// dirty id is free only after a pass finds it clean, never because alloc looked.
func TestIDPoolLimbo(t *testing.T) {
	t.Parallel()
	p := newIDPool(3)
	a, _ := p.alloc()
	b, _ := p.alloc()
	if _, err := p.alloc(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("alloc with none free: %v, want ENOSPC", err)
	}
	p.toLimbo(limboID{id: a})
	if _, err := p.alloc(); !errors.Is(err, syscall.EBUSY) {
		t.Fatalf("alloc with only a dirty id: %v, want EBUSY", err)
	}
	if n := p.pass(func(limboID) bool { return false }); n != 0 {
		t.Fatalf("a pass that finds it dirty freed %d", n)
	}
	if _, err := p.alloc(); !errors.Is(err, syscall.EBUSY) {
		t.Fatalf("alloc after a dirty pass: %v, want EBUSY", err)
	}
	if n := p.pass(func(limboID) bool { return true }); n != 1 {
		t.Fatalf("a clean pass freed %d, want 1", n)
	}
	got, err := p.alloc()
	if err != nil || got != a {
		t.Fatalf("alloc after limbo: %d, %v, want %d", got, err, a)
	}
	_ = b
}

// The limbo worker's pass on the model, with a clock: a freed RMID keeps its group's
// occupancy, which decays; the pass frees it once it reads below the threshold, in every
// domain; LimboTime holds it dirty whatever its occupancy; a test's occupancy follows the RMID
// into limbo until cleared.
func TestLimboPassFollowsOccupancy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		o     Options
		occ   []float64     // each domain's occupancy at the rmdir
		set   string        // a test's llc_occupancy for the group, "" none
		after time.Duration // when the pass runs, after the rmdir
		clean bool
	}{
		{name: "empty", o: Options{Limbo: true}, occ: []float64{0}, clean: true},
		{name: "under", o: Options{Limbo: true}, occ: []float64{MaxThresholdOccupancy - occupancyScale}, clean: true},
		{name: "at the threshold", o: Options{Limbo: true}, occ: []float64{MaxThresholdOccupancy}, clean: false},
		{name: "above", o: Options{Limbo: true}, occ: []float64{4 * MaxThresholdOccupancy}, clean: false},
		// 4 MiB decays under 1 MiB after LLCDecay·ln 4 (2.8s at the default 2s).
		{name: "above, decayed", o: Options{Limbo: true}, occ: []float64{4 * MaxThresholdOccupancy}, after: 3 * time.Second, clean: true},
		{name: "above, not yet decayed", o: Options{Limbo: true}, occ: []float64{4 * MaxThresholdOccupancy}, after: 2 * time.Second, clean: false},
		{name: "one domain above", o: Options{Limbo: true, L3Domains: 2}, occ: []float64{0, 2 * MaxThresholdOccupancy}, clean: false},
		{name: "set above", o: Options{Limbo: true}, occ: []float64{0}, set: "2097152", after: time.Hour, clean: false},
		{name: "set under", o: Options{Limbo: true}, occ: []float64{4 * MaxThresholdOccupancy}, set: "0", clean: true},
		{name: "set unreadable", o: Options{Limbo: true}, occ: []float64{0}, set: "Unavailable", clean: false},
		{name: "held", o: Options{LimboTime: time.Minute}, occ: []float64{0}, after: time.Minute - time.Second, clean: false},
		{name: "held, over", o: Options{LimboTime: time.Minute}, occ: []float64{0}, after: time.Minute, clean: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			now := time.Unix(1000, 0)
			tc.o.NumRMIDs = 2
			tc.o.now = func() time.Time { return now }
			m := newModel(tc.o.withDefaults(), newFakeHost())
			g, errno := m.mkdir(m.root, "g", true)
			if errno != 0 {
				t.Fatal(errno)
			}
			for d, occ := range tc.occ {
				g.counters.l3[d].occ, g.counters.l3[d].occAt = occ, now
			}
			if tc.set != "" {
				m.faults.counter = map[counterKey]string{{"llc_occupancy", g.Path()}: tc.set}
			}
			if errno := m.rmdir(g); errno != 0 {
				t.Fatal(errno)
			}
			if _, errno := m.mkdir(m.root, "h", true); errno != syscall.EBUSY {
				t.Fatalf("mkdir with the only RMID in limbo: %v, want EBUSY", errno)
			}
			now = now.Add(tc.after)
			if freed := m.limboPass(); (freed == 1) != tc.clean {
				t.Fatalf("the pass freed %d, want clean %v", freed, tc.clean)
			}
			_, errno = m.mkdir(m.root, "h", true)
			if want := map[bool]syscall.Errno{true: 0, false: syscall.EBUSY}[tc.clean]; errno != want {
				t.Fatalf("mkdir after the pass: %v, want %v", errno, want)
			}
			if tc.set != "" && !tc.clean {
				delete(m.faults.counter, counterKey{"llc_occupancy", g.Path()})
				now = now.Add(time.Minute)
				if m.limboPass() != 1 {
					t.Errorf("the RMID stayed dirty after the test's occupancy was cleared")
				}
			}
		})
	}
}
