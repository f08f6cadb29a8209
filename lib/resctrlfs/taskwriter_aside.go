package resctrlfs

import (
	"io/fs"
	"path/filepath"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/aside"
)

// AsideTaskWriter is the TaskWriter of a process that must not wait on resctrl (the OCI
// hook, which the runtime waits for): each program of writes (one open, a write per id) runs
// in a vfork child through Calls, until Deadline. A child still running then is killed
// there, and writes no id after it (one that may be another pod's pid by then). Nothing is
// kept open between calls: the child closes what it opened as it ends.
//
// The child stops at a failed write; the ids after it go in a new child if result lets the
// loop go on. At the deadline Write returns aside.ErrStuck: which ids were written is then
// unknown.
type AsideTaskWriter struct {
	Root     string
	Calls    *aside.Calls
	Deadline time.Time
}

// Write is TaskWriter's.
func (w *AsideTaskWriter) Write(path string, ids []int, result func(id int, err error) error) error {
	name := filepath.Join(w.Root, path, "tasks")
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return err
	}
	retried := false
	for len(ids) > 0 {
		steps := make([]aside.Step, 1, 1+len(ids))
		steps[0] = aside.Step{Trap: unix.SYS_OPENAT, Args: [4]uintptr{aside.AtFDCWD, uintptr(unsafe.Pointer(p)), unix.O_WRONLY | unix.O_CLOEXEC}, Stop: true}
		bufs := make([][]byte, len(ids))
		for i, id := range ids {
			bufs[i] = strconv.AppendInt(nil, int64(id), 10)
			bufs[i] = append(bufs[i], '\n')
			steps = append(steps, aside.Step{Trap: unix.SYS_WRITE, FdOf: 1, Args: [4]uintptr{0, uintptr(unsafe.Pointer(&bufs[i][0])), uintptr(len(bufs[i]))}, Stop: true})
		}
		if err := w.Calls.Run(w.Deadline, steps, p, bufs); err != nil {
			return err
		}
		if e := steps[0].Errno; e != 0 {
			return &fs.PathError{Op: "open", Path: name, Err: e}
		}
		next := len(ids)
		for i, s := range steps[1:] {
			var werr error
			if s.Errno != 0 {
				if stale(s.Errno) && !retried {
					retried, next = true, i
					break
				}
				werr = &fs.PathError{Op: "write", Path: name, Err: s.Errno}
			}
			if err := result(ids[i], werr); err != nil {
				return err
			}
			if werr != nil {
				next = i + 1
				break
			}
		}
		ids = ids[next:]
	}
	return nil
}
