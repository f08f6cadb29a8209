package wrapper

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/state"
	"github.com/resctrl-mon/resctrl-mon/lib/sysfile"
)

// JoinGroup writes tid into the monitoring group that the registry in stateDir binds
// container id to, and returns the group's path below root ("" when the container has no
// group: not monitored, or placed by nobody). Nothing is locked or written in the registry:
// the binding and the record are read as they are (both are replaced by renames, never seen
// half-written), and a group removed in between makes the write fail, which is reported.
//
// A task written into a resctrl group stays there across execve, and what it forks or clones
// after is born there: the wrapper writes the thread that will exec the real runtime, so
// `runc exec`, its `runc init` and the process it runs in the container are all counted from
// their first instruction.
//
// For a group inside an allocation class, tid first joins the class (its own tasks): the
// kernel moves a task into a monitoring group only from the group's own class (EINVAL, "Can't
// move task to different control group"), and the wrapper runs in the engine's class, the
// root. The runtime's exec writes the exec'd process into the class's tasks anyway (runc's
// setnsProcess.start, crun's libcrun_join_process), and the record's class is the one the
// container's init was placed from, so this reclassifies nothing the runtime would not.
func JoinGroup(stateDir, root, id string, tid int) (string, error) {
	st, err := state.OpenReadOnly(stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil // no hook ever ran here
	}
	if err != nil {
		return "", err
	}
	group, err := st.ContainerGroup(id)
	if err != nil || group == "" {
		return "", err
	}
	rec, ok, err := st.Load(group)
	if err != nil || !ok {
		return "", err
	}
	if !filepath.IsLocal(rec.Path) {
		return "", fmt.Errorf("record of %s: path %q is not below the resctrl root", group, rec.Path)
	}
	if rec.Class != "" && (!filepath.IsLocal(rec.Class) || strings.ContainsRune(rec.Class, '/')) {
		return rec.Path, fmt.Errorf("record of %s: class %q is not a class directory", group, rec.Class)
	}
	if err := resctrlfs.Check(root); err != nil {
		return rec.Path, err
	}
	if rec.Class != "" {
		if err := writeTask(root, rec.Class, tid); err != nil {
			return rec.Path, fmt.Errorf("join class %s: %w", rec.Class, err)
		}
	}
	if err := writeTask(root, rec.Path, tid); err != nil {
		return rec.Path, fmt.Errorf("join %s: %w", rec.Path, err)
	}
	return rec.Path, nil
}

// writeTask writes tid to the tasks file of the group at path below root, with the kernel's
// last_cmd_status in the error.
func writeTask(root, path string, tid int) error {
	tasks := filepath.Join(root, path, "tasks")
	// O_WRONLY without O_CREATE: a group that went meanwhile is an error, never a new file.
	fd, err := sysfile.Open(tasks, unix.O_WRONLY, 0)
	if err != nil {
		return err
	}
	werr := sysfile.Write(fd, tasks, []byte(strconv.Itoa(tid)))
	if cerr := unix.Close(fd); werr == nil && cerr != nil {
		werr = &fs.PathError{Op: "close", Path: tasks, Err: cerr}
	}
	if err := werr; err != nil {
		if s := resctrlfs.LastCmdStatus(root); s != "" {
			err = fmt.Errorf("%w (%s)", err, s)
		}
		return fmt.Errorf("write task %d to %s: %w", tid, tasks, err)
	}
	return nil
}
