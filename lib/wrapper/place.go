package wrapper

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// target is the group an exec joins, as the registry has it.
type target struct {
	Path  string `json:"path"`  // the group below the resctrl root; "" for none
	Class string `json:"class"` // its allocation class; "" for the root class
	// pending is why the pod has no group yet (the record's Pending): nothing to join.
	pending string
}

// findGroup reads the registry in stateDir for container id's group (target{} when it has
// none: not monitored, or placed by nobody; pending set when the pod waits for an RMID), and
// nothing in resctrl, so it never waits on resctrl. Nothing is locked or written in the
// registry: the binding and the record are read as they are (both are replaced by renames,
// never seen half-written).
func findGroup(stateDir, id string) (target, error) {
	st, err := registry.OpenReadOnly(stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return target{}, nil // no hook ever ran here
	}
	if err != nil {
		return target{}, err
	}
	group, err := st.ContainerGroup(id)
	if err != nil || group == "" {
		return target{}, err
	}
	rec, ok, err := st.Load(group)
	if err != nil || !ok {
		return target{}, err
	}
	g := target{Path: rec.Path, Class: rec.Class, pending: rec.Pending}
	if err := g.check(); err != nil {
		return g, fmt.Errorf("record of %s: %w", group, err)
	}
	return g, nil
}

// check refuses a target that is not a group below the resctrl root (the registry is ours,
// but a path is never followed out of resctrl on its word).
func (g target) check() error {
	if !filepath.IsLocal(g.Path) {
		return fmt.Errorf("path %q is not below the resctrl root", g.Path)
	}
	if g.Class != "" && (!filepath.IsLocal(g.Class) || strings.ContainsRune(g.Class, '/')) {
		return fmt.Errorf("class %q is not a class directory", g.Class)
	}
	return nil
}

// join writes tid into the group below root, once mount (the configuration's check) has
// found resctrl there. still is asked right before each write whether tid is still the task meant (a late write must not move a stranger that
// was given a reused pid). A group removed since the registry was read makes the write fail,
// which is reported.
//
// The wrapper writes the thread that will exec the real runtime, so `runc exec`, its
// `runc init` and the process it runs in the container are all born in the group, counted
// from their first instruction (see the package comment of resctrlfs, "Tasks").
//
// For a group inside an allocation class, tid first joins the class (its own tasks): a task
// moves into a monitoring group only from the group's own class ("Classes"), and the wrapper
// runs in the engine's class, the root. The runtime's exec writes the exec'd process into the class's tasks anyway (runc's
// setnsProcess.start, crun's libcrun_join_process), and the record's class is the one the
// container's init was placed from, so this reclassifies nothing the runtime would not.
func (g target) join(root string, mount resctrlfs.Mount, tid int, still func() bool) error {
	if err := g.check(); err != nil {
		return err
	}
	if err := mount(root); err != nil {
		return err
	}
	w := resctrlfs.NewTaskWriter(root)
	defer w.Close()
	if g.Class != "" {
		if !still() {
			return fmt.Errorf("join class %s: %w", g.Class, errGone)
		}
		if err := w.WriteOne(g.Class, tid); err != nil {
			return fmt.Errorf("join class %s: %w", g.Class, err)
		}
	}
	if !still() {
		return fmt.Errorf("join %s: %w", g.Path, errGone)
	}
	if err := w.WriteOne(g.Path, tid); err != nil {
		return fmt.Errorf("join %s: %w", g.Path, err)
	}
	return nil
}
