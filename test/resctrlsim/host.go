package resctrlsim

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/lib/sysfile"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim/procevents"
)

// Host is what the simulator learns about the machine's tasks. The real one reads /proc and
// the kernel's proc connector; unit tests of the model use a fake.
type Host interface {
	// Events calls fn for every task event the kernel reported since the last call, in the
	// kernel's order.
	Events(fn func(procevents.Event)) error
	// WaitEvents blocks until events are queued or the timeout passes.
	WaitEvents(timeout time.Duration) bool
	// Threads lists every thread on the host.
	Threads() ([]Thread, error)
	// Stat reads a live thread's CPU time; ok is false when the thread is gone.
	Stat(tid int) (stat TaskStat, ok bool)
	// Alive reports whether a thread exists (a zombie does).
	Alive(tid int) bool
	// Tgid returns the thread group of a live thread; ok is false when it does not exist.
	Tgid(tid int) (tgid int, ok bool)
	// Lost is how many times the kernel dropped events because we read them too late.
	Lost() uint64
	Close() error
}

// Thread is one task (thread) and its thread group.
type Thread struct{ Tid, Tgid int }

// TaskStat is the part of /proc/<tid>/task/<tid>/stat the simulator charges to groups.
type TaskStat struct {
	CPUTime time.Duration // utime + stime
	CPU     int           // processor it last ran on
}

// procHost is the real Host: /proc for state, the proc connector for the order of forks.
type procHost struct {
	proc string
	conn *procevents.Conn
	tick time.Duration // one clock tick (USER_HZ) in /proc/<pid>/stat
}

func newProcHost() (*procHost, error) {
	conn, err := procevents.Open()
	if err != nil {
		return nil, fmt.Errorf("watch forks: %w", err)
	}
	// USER_HZ is 100 on every Linux architecture the simulator is meant for; /proc reports
	// utime and stime in those ticks whatever CONFIG_HZ is.
	return &procHost{proc: "/proc", conn: conn, tick: 10 * time.Millisecond}, nil
}

func (h *procHost) Events(fn func(procevents.Event)) error {
	_, err := h.conn.Drain(fn)
	return err
}

func (h *procHost) WaitEvents(timeout time.Duration) bool {
	ok, err := h.conn.Wait(timeout)
	return ok && err == nil
}

func (h *procHost) Lost() uint64 { return h.conn.Lost() }
func (h *procHost) Close() error { return h.conn.Close() }

func (h *procHost) Threads() ([]Thread, error) {
	procs, err := os.ReadDir(h.proc)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	var out []Thread
	for _, p := range procs {
		tgid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		tasks, err := os.ReadDir(h.proc + "/" + p.Name() + "/task")
		if err != nil {
			continue // exited while we listed
		}
		for _, t := range tasks {
			if tid, err := strconv.Atoi(t.Name()); err == nil {
				out = append(out, Thread{Tid: tid, Tgid: tgid})
			}
		}
	}
	return out, nil
}

func (h *procHost) Stat(tid int) (TaskStat, bool) {
	// /proc/<tid>/stat of a non-leader thread shows the whole thread group; the task/
	// entry below it is that thread alone.
	id := strconv.Itoa(tid)
	b, err := sysfile.ReadFile(h.proc+"/"+id+"/task/"+id+"/stat", 0, 4096)
	if err != nil {
		return TaskStat{}, false
	}
	st, err := parseStat(b, h.tick)
	if err != nil {
		return TaskStat{}, false
	}
	return st, true
}

func (h *procHost) Alive(tid int) bool {
	// /proc/<tid> resolves for every thread, leader or not, though only leaders are listed.
	return unix.Access(h.proc+"/"+strconv.Itoa(tid), unix.F_OK) == nil
}

func (h *procHost) Tgid(tid int) (int, bool) {
	b, err := sysfile.ReadFile(h.proc+"/"+strconv.Itoa(tid)+"/status", 0, 64<<10)
	if err != nil {
		return 0, false
	}
	tgid, err := parseStatusTgid(b)
	return tgid, err == nil
}

// parseStat reads the CPU time and the processor from a /proc stat line.
func parseStat(b []byte, tick time.Duration) (TaskStat, error) {
	st, err := procfs.ParseStat(b)
	if err != nil {
		return TaskStat{}, err
	}
	if st.Processor < 0 {
		return TaskStat{}, errors.New("stat: no processor field")
	}
	if st.CPUTicks > uint64(1<<62)/uint64(tick) {
		return TaskStat{}, fmt.Errorf("stat: cpu time %d ticks out of range", st.CPUTicks)
	}
	return TaskStat{CPUTime: time.Duration(st.CPUTicks) * tick, CPU: st.Processor}, nil
}

// parseStatusTgid finds the "Tgid:" line of /proc/<pid>/status.
func parseStatusTgid(b []byte) (int, error) {
	for line := range strings.SplitSeq(string(b), "\n") {
		v, ok := strings.CutPrefix(line, "Tgid:")
		if !ok {
			continue
		}
		tgid, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || tgid <= 0 {
			return 0, fmt.Errorf("status: bad Tgid %q", strings.TrimSpace(v))
		}
		return tgid, nil
	}
	return 0, errors.New("status: no Tgid line")
}

var _ Host = (*procHost)(nil)
