package resctrlfs

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/sysfile"
)

// tasksFiles keeps open the tasks files of the groups this process writes to, so that a
// container joining its pod's group costs one write(2): in a long-running front end (the NRI
// adapter) that is every placement after a pod's first.
//
// A descriptor can never write into the wrong group. Once a group is removed (by this process
// or any other) a write through its old file fails, ENOENT for the deleted rdtgroup or
// ENODEV for the removed kernfs node, and a group made again under the same name is another
// file. Such a write is made again once through a fresh open, which fails as before if the
// group is really gone. A file is closed only when no write uses it (see tasksFile).
type tasksFiles struct {
	mu    sync.Mutex
	files map[string]*tasksFile // by the tasks file's path
}

// tasksFile is one open tasks file and how many writes use it now. Taken out of the map
// (its group removed, room needed) it is closed once the last of them is done: a writer
// never has its file closed under it.
type tasksFile struct {
	f     *os.File
	users int
	gone  bool
}

// maxTasksFiles bounds the files kept open: a node's pods, with room. Past it one is let go.
const maxTasksFiles = 256

// acquire returns path's open file, opening it if need be, for the caller to release.
func (t *tasksFiles) acquire(path string) (*tasksFile, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.files[path]; e != nil {
		e.users++
		return e, nil
	}
	// O_WRONLY without O_CREATE: a group that is gone is an error, never a new file. Opened
	// by sysfile and wrapped, a blocking descriptor is never offered to the runtime's poller
	// (os.OpenFile would add five system calls to the hook's one write).
	fd, err := sysfile.Open(path, unix.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	if t.files == nil {
		t.files = map[string]*tasksFile{}
	}
	if len(t.files) >= maxTasksFiles {
		for p, old := range t.files { // any one: a map's order is as good as another
			t.retire(p, old)
			break
		}
	}
	e := &tasksFile{f: f, users: 1}
	t.files[path] = e
	return e, nil
}

// release ends one use of e.
func (t *tasksFiles) release(e *tasksFile) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e.users--
	if e.gone && e.users == 0 {
		_ = e.f.Close()
	}
}

// drop lets e go: its group is gone.
func (t *tasksFiles) drop(path string, e *tasksFile) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.retire(path, e)
}

// forget lets go of the tasks file of every group named name (under any class): the group
// was removed.
func (t *tasksFiles) forget(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p, e := range t.files {
		if filepath.Base(filepath.Dir(p)) == name {
			t.retire(p, e)
		}
	}
}

// retire takes e out of the map, if it is still there, and closes it unless it is in use
// (then its last release does). t.mu is held.
func (t *tasksFiles) retire(path string, e *tasksFile) {
	if t.files[path] == e {
		delete(t.files, path)
	}
	if !e.gone {
		e.gone = true
		if e.users == 0 {
			_ = e.f.Close()
		}
	}
}

// stale reports whether a write failed because its file's group is gone.
func stale(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENODEV)
}
