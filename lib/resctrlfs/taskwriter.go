package resctrlfs

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// TaskWriter writes thread ids into a tasks file: of the group (or the class's own group) at
// path below the resctrl root, one id per write(2), the only way the project moves a task
// (see the package comment, "Tasks"). Each write's result goes to result, which may stop the
// loop. A write that finds the group gone since its file was opened (stale) is made once more
// through a new open.
//
// There are two: FileTaskWriter in this process (kernel.Groups' WriteTasks, the runtime
// wrapper's join), and AsideTaskWriter, the hook's join, whose writes run in a vfork child
// the hook can leave at its deadline (lib/aside; linux/amd64: elsewhere the hook leaves
// every placement to its worker, whose kernel.Groups writes with a FileTaskWriter).
type TaskWriter interface {
	Write(path string, ids []int, result func(id int, err error) error) error
}

var (
	_ TaskWriter = (*FileTaskWriter)(nil)
	_ TaskWriter = (*AsideTaskWriter)(nil)
)

// FileTaskWriter is the TaskWriter of a process of the project's own. The files stay open
// until Close (see tasksFiles), so a long-running front end writes a joining container's
// threads with one write each.
type FileTaskWriter struct {
	root  string
	files tasksFiles
}

// NewTaskWriter writes below the resctrl mount at root (checked by the caller).
func NewTaskWriter(root string) *FileTaskWriter { return &FileTaskWriter{root: root} }

// Write is TaskWriter's.
func (w *FileTaskWriter) Write(path string, ids []int, result func(id int, err error) error) error {
	p := filepath.Join(w.root, path, "tasks")
	file, err := w.files.acquire(p)
	if err != nil {
		return err
	}
	defer func() { w.files.release(file) }() // the file in use when the loop ends
	buf := make([]byte, 0, 24)
	for _, id := range ids {
		buf = append(strconv.AppendInt(buf[:0], int64(id), 10), '\n')
		_, werr := file.f.Write(buf)
		if werr != nil && stale(werr) {
			w.files.drop(p, file)
			fresh, err := w.files.acquire(p)
			if err != nil {
				return err
			}
			w.files.release(file)
			file = fresh
			_, werr = file.f.Write(buf)
		}
		if err := result(id, werr); err != nil {
			return err
		}
	}
	return nil
}

// WriteOne writes tid into the group at path, with the kernel's last_cmd_status in the error.
func (w *FileTaskWriter) WriteOne(path string, tid int) error {
	err := w.Write(path, []int{tid}, func(_ int, err error) error { return err })
	if err == nil {
		return nil
	}
	if s := LastCmdStatus(w.root); s != "" && s != "ok" {
		err = fmt.Errorf("%w (%s)", err, s)
	}
	return fmt.Errorf("write task %d to %s: %w", tid, filepath.Join(w.root, path, "tasks"), err)
}

// Forget lets go of the tasks files of every group named name: it was removed.
func (w *FileTaskWriter) Forget(name string) { w.files.forget(name) }

// Close closes every file kept open.
func (w *FileTaskWriter) Close() {
	w.files.mu.Lock()
	defer w.files.mu.Unlock()
	for p, e := range w.files.files {
		w.files.retire(p, e)
	}
}
