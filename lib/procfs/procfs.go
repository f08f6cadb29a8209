// Package procfs reads the few /proc facts resctrl-mon relies on: a process's start time
// (a pid alone is no identity: pids are reused), its threads and its state. Which cgroups a
// process is in is lib/cgroup's.
package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/resctrl-mon/resctrl-mon/lib/sysfile"
)

// Stat is the part of /proc/<pid>/stat used here.
type Stat struct {
	State     byte   // R, S, D, Z, X, ... (field 3)
	CPUTicks  uint64 // utime + stime, in USER_HZ clock ticks (fields 14 and 15)
	StartTime uint64 // clock ticks after boot (field 22)
	Processor int    // the CPU it last ran on (field 39); -1 when the line stops before it
}

// ParseStat parses a /proc/<pid>/stat line. The command name may hold spaces and
// parentheses, so fields are counted from the last ')'.
func ParseStat(b []byte) (Stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, errors.New("stat: no ')' after the command name")
	}
	// f[0] is field 3; field n is f[n-3].
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("stat: %d fields after the command name", len(f))
	}
	utime, err1 := strconv.ParseUint(f[14-3], 10, 63)
	stime, err2 := strconv.ParseUint(f[15-3], 10, 63)
	start, err3 := strconv.ParseUint(f[22-3], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return Stat{}, fmt.Errorf("stat: %w", err)
	}
	st := Stat{State: f[0][0], CPUTicks: utime + stime, StartTime: start, Processor: -1}
	if len(f) > 39-3 {
		cpu, err := strconv.Atoi(f[39-3])
		if err != nil || cpu < 0 {
			return Stat{}, fmt.Errorf("stat: bad processor %q", f[39-3])
		}
		st.Processor = cpu
	}
	return st, nil
}

// ReadStat reads /proc/<pid>/stat.
func ReadStat(pid int) (Stat, error) {
	b, err := sysfile.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"), 0, maxProcFile)
	if err != nil {
		return Stat{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	return ParseStat(b)
}

// SameProcess reports whether pid is alive (not a zombie) and started at start: the process a
// runtime recorded, not a later one that was given the same pid.
func SameProcess(pid int, start uint64) bool {
	st, err := ReadStat(pid)
	return err == nil && st.StartTime == start && st.State != 'Z' && st.State != 'X'
}

// Threads lists a process's thread ids.
func Threads(pid int) ([]int, error) {
	es, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return nil, fmt.Errorf("pid %d: %w", pid, err)
	}
	out := make([]int, 0, len(es))
	for _, e := range es {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out, nil
}

// Finished reports whether a thread is gone or a zombie: it will never run again.
func Finished(tid int) bool {
	st, err := ReadStat(tid)
	return err != nil || st.State == 'Z' || st.State == 'X'
}

// Running counts the tasks of tids that can still run: a zombie is still listed in its
// resctrl group (the kernel keeps it there until it is reaped) but will never run again.
func Running(tids map[int]bool) int {
	n := 0
	for tid := range tids {
		if !Finished(tid) {
			n++
		}
	}
	return n
}

// maxProcFile bounds what is read of a /proc file: a stat line is a few hundred bytes.
const maxProcFile = 64 << 10

// Comm is the process's command name (/proc/<pid>/comm), without its newline.
func Comm(pid int) (string, error) {
	b, err := sysfile.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"), 0, maxProcFile)
	if err != nil {
		return "", fmt.Errorf("pid %d: %w", pid, err)
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}
