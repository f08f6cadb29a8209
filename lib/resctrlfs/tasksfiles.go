package resctrlfs

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// tasksFiles keeps open the tasks files of the groups this process writes to, so that a
// container joining its pod's group costs one write(2): in a long-running front end (the NRI
// adapter) that is every placement after a pod's first.
//
// A descriptor can never write into the wrong group. Once a group is removed (by this process
// or any other) a write through its old file fails, ENOENT for the deleted rdtgroup or
// ENODEV for the removed kernfs node, and a group made again under the same name is another
// file. Such a write is made again once through a fresh open, which fails as before if the
// group is really gone. *os.File, not a bare descriptor: one closed while another goroutine
// writes through it is closed only when that write returns, and its number is never reused
// under a writer.
type tasksFiles struct {
	mu    sync.Mutex
	files map[string]*os.File // by the tasks file's path
}

// maxTasksFiles bounds the open files: a node's pods, with room. Past it one is closed.
const maxTasksFiles = 256

// get returns path's open file, opening it if it is not.
func (t *tasksFiles) get(path string) (*os.File, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f := t.files[path]; f != nil {
		return f, nil
	}
	// O_WRONLY without O_CREATE: a group that is gone is an error, never a new file.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	if t.files == nil {
		t.files = map[string]*os.File{}
	}
	if len(t.files) >= maxTasksFiles {
		for p, old := range t.files { // any one: a map's order is as good as another
			_ = old.Close()
			delete(t.files, p)
			break
		}
	}
	t.files[path] = f
	return f, nil
}

// drop closes f and forgets it, unless path has another file by now.
func (t *tasksFiles) drop(path string, f *os.File) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.files[path] == f {
		delete(t.files, path)
	}
	_ = f.Close()
}

// forget closes the tasks file of every group named name (under any class): the group was
// removed.
func (t *tasksFiles) forget(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p, f := range t.files {
		if filepath.Base(filepath.Dir(p)) == name {
			_ = f.Close()
			delete(t.files, p)
		}
	}
}

// stale reports whether a write failed because its file's group is gone, or the file was
// closed under it.
func stale(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENODEV) || errors.Is(err, os.ErrClosed)
}
