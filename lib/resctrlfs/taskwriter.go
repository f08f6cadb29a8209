package resctrlfs

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// TaskWriter writes thread ids into groups' tasks files, the one way the project does it in
// a process of its own (the Kernel's WriteTasks, the runtime wrapper's join); the hook's join
// makes the same writes as raw system calls in a vfork child (hooks/hook). One write(2) is one
// id: the kernel takes the first id it parses and says nothing of the rest. The files stay
// open until Close (see tasksFiles), so a long-running front end writes a joining
// container's threads with one write each.
type TaskWriter struct {
	root  string
	files tasksFiles
}

// NewTaskWriter writes below the resctrl mount at root (checked by the caller).
func NewTaskWriter(root string) *TaskWriter { return &TaskWriter{root: root} }

// Write writes ids to the tasks file of the group at path (below the root), handing each
// write's result to result, which may stop the loop. A write that finds the group gone since
// its file was opened is made once more through a new open.
func (w *TaskWriter) Write(path string, ids []int, result func(id int, err error) error) error {
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
func (w *TaskWriter) WriteOne(path string, tid int) error {
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
func (w *TaskWriter) Forget(name string) { w.files.forget(name) }

// Close closes every file kept open.
func (w *TaskWriter) Close() {
	w.files.mu.Lock()
	defer w.files.mu.Unlock()
	for p, e := range w.files.files {
		w.files.retire(p, e)
	}
}
