package resctrlsim

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim/procevents"
)

// syncLocked applies every task event the kernel queued since the last call. Done before each
// operation, it makes the simulator see a fork that happened before a tasks write before
// that write, and one that happened after it after, as the kernel does.
func (m *model) syncLocked() {
	if err := m.host.Events(m.apply); err != nil {
		m.opts.Logf("resctrlsim: reading proc events: %v", err)
	}
	if lost := m.host.Lost(); lost != m.stats.LostEvents {
		m.opts.Logf("resctrlsim: the kernel dropped proc events %d times: groups of new tasks may be wrong", lost)
		m.stats.LostEvents = lost
	}
}

// apply updates task membership for one kernel event.
func (m *model) apply(ev procevents.Event) {
	m.stats.Events++
	switch ev.Kind {
	case procevents.Fork:
		// A new task copies its creator's CLOSID and RMID (dup_task_struct). For a new
		// process the event names the creating thread; for a new thread it names only the
		// process's parent, so the creator is inferred from the thread group.
		from := m.groupOf(ev.ParentPid)
		if ev.Pid != ev.Tgid {
			from = m.threadCreator(ev.Tgid)
		}
		m.track(ev.Pid, ev.Tgid, from, true)
	case procevents.Exec:
		m.exec(ev.Tgid)
	case procevents.Exit:
		if t := m.tasks[ev.Pid]; t != nil {
			m.charge(ev.Pid, t)
			t.exited = true
		}
	}
}

// groupOf is the group a thread is in now: the root unless it was moved or born elsewhere.
func (m *model) groupOf(tid int) *group {
	if t := m.tasks[tid]; t != nil && !t.g.dead {
		return t.g
	}
	return m.root
}

// threadCreator guesses which group the creator of a new thread of tgid is in. The proc
// connector does not say which thread called clone(CLONE_THREAD); when all known threads of
// the process share a group the answer is exact, otherwise the leader's group is used and the
// guess is counted.
func (m *model) threadCreator(tgid int) *group {
	leader := m.groupOf(tgid)
	for tid := range m.threads[tgid] {
		if t := m.tasks[tid]; !t.exited && m.groupOf(tid) != leader {
			m.stats.AmbiguousThread++
			break
		}
	}
	return leader
}

// track records a thread's group. A task born under our eyes has used no CPU yet, so its
// baseline is zero; one we meet for the first time gets its current CPU time as baseline.
func (m *model) track(tid, tgid int, g *group, born bool) *task {
	if old := m.tasks[tid]; old != nil {
		m.untrack(tid, old)
	}
	t := &task{tgid: tgid, g: g, charged: born}
	m.tasks[tid] = t
	if m.threads[tgid] == nil {
		m.threads[tgid] = map[int]bool{}
	}
	m.threads[tgid][tid] = true
	return t
}

func (m *model) untrack(tid int, t *task) {
	delete(m.tasks, tid)
	if set := m.threads[t.tgid]; set != nil {
		delete(set, tid)
		if len(set) == 0 {
			delete(m.threads, t.tgid)
		}
	}
}

// exec handles execve: only the calling thread survives, and it takes the thread group id
// (de_thread). The other threads, the old leader among them, were reported as exits first.
// The survivor keeps its own group, so when a non-leader exec'd, the leader's id now means
// that thread.
func (m *model) exec(tgid int) {
	leader := m.tasks[tgid]
	var survivor *task
	var survivorTid, alive int
	for tid := range m.threads[tgid] {
		if t := m.tasks[tid]; tid != tgid && !t.exited {
			survivor, survivorTid = t, tid
			alive++
		}
	}
	if alive == 1 && (leader == nil || leader.exited) {
		if _, exists := m.host.Tgid(survivorTid); !exists {
			m.untrack(survivorTid, survivor)
			nt := m.track(tgid, tgid, survivor.g, false)
			nt.cpu, nt.charged = survivor.cpu, survivor.charged
		}
	}
	// The thread group's own index, not every task the simulator knows: exec events come
	// from the whole host, and a scan of all tasks on each was most of the simulator's CPU
	// under a benchmark's runc execs. Collected first: untrack edits the index.
	for _, tid := range slices.Collect(maps.Keys(m.threads[tgid])) {
		if t := m.tasks[tid]; t != nil && tid != tgid {
			m.untrack(tid, t)
		}
	}
}

// writeTasks moves the tasks named in one write(2) to g, like rdtgroup_tasks_write: each id
// is one thread; 0 means the writer itself; a missing thread is ESRCH, garbage is EINVAL,
// and a thread outside a MON group's control group is EINVAL.
func (m *model) writeTasks(g *group, data []byte, caller int) syscall.Errno {
	m.lastCmd = "ok"
	if g.dead {
		return syscall.ENOENT
	}
	if errno := m.faults.take(OpTasksWrite); errno != 0 {
		return m.injected(OpTasksWrite, errno)
	}
	text := strings.TrimSpace(string(data))
	if text == "" {
		return syscall.EINVAL
	}
	ids := []string{text}
	if m.opts.TaskLists {
		ids = strings.Split(text, ",")
	}
	for _, s := range ids {
		s = strings.TrimSpace(s)
		pid, err := strconv.ParseInt(s, 0, 32)
		if err != nil {
			return m.fail(syscall.EINVAL, "Task list parsing error pid %s", s)
		}
		if pid < 0 {
			return m.fail(syscall.EINVAL, "Invalid pid %d", pid)
		}
		if errno := m.moveTask(int(pid), g, caller); errno != 0 {
			if m.opts.TaskLists {
				m.lastCmd += "\nError while processing task " + strconv.FormatInt(pid, 10)
			}
			return errno
		}
	}
	return 0
}

func (m *model) moveTask(tid int, g *group, caller int) syscall.Errno {
	if tid == 0 {
		tid = caller
	}
	t := m.tasks[tid]
	if !m.host.Alive(tid) {
		return m.fail(syscall.ESRCH, "No task %d", tid)
	}
	from := m.groupOf(tid)
	if from == g {
		return 0
	}
	if g.kind == kindMon && from.ctrl() != g.parent {
		return m.fail(syscall.EINVAL, "Can't move task to different control group")
	}
	if t == nil {
		// First sight of a thread that predates us: learn its thread group.
		tgid, ok := m.host.Tgid(tid)
		if !ok {
			return m.fail(syscall.ESRCH, "No task %d", tid)
		}
		t = m.track(tid, tgid, m.root, false)
	}
	m.charge(tid, t) // what it used so far belongs to the group it leaves
	t.g = g
	return 0
}

// listTasks returns the live thread ids in g, as the tasks file shows them. A zombie is still
// listed in its group, as the kernel's for_each_process_thread does.
func (m *model) listTasks(g *group) ([]int, syscall.Errno) {
	if g.dead {
		return nil, syscall.ENOENT
	}
	if errno := m.faults.take(OpTasksRead); errno != 0 {
		return nil, m.injected(OpTasksRead, errno)
	}
	var out []int
	if g.kind != kindRoot {
		// Every thread outside the root has an entry: only those need checking.
		for tid, t := range m.tasks {
			if t.g == g && m.host.Alive(tid) {
				out = append(out, tid)
			}
		}
		slices.Sort(out)
		return out, 0
	}
	threads, err := m.host.Threads()
	if err != nil {
		return nil, syscall.EIO
	}
	// Threads born while we listed /proc have their fork events queued by now.
	m.syncLocked()
	for _, th := range threads {
		if m.groupOf(th.Tid) == g {
			out = append(out, th.Tid)
		}
	}
	m.prune(threads)
	slices.Sort(out)
	return out, 0
}

// prune forgets exited threads that are gone from /proc, so the task table does not grow
// forever. A thread missing from the listing but not reported as exited may have been born
// after the listing was taken, so it stays.
func (m *model) prune(live []Thread) {
	alive := make(map[int]bool, len(live))
	for _, th := range live {
		alive[th.Tid] = true
	}
	for tid, t := range m.tasks {
		if t.exited && !alive[tid] {
			m.untrack(tid, t)
		}
	}
}
