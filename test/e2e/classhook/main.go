// Command classhook does, as a createRuntime hook run ahead of resctrl-mon's, what a
// runtime's intelrdt code does before any hook on a host with RDT, by the rules read in
// runc's libcontainer/intelrdt (Manager.Apply, validate's intelrdtCheck) and crun's
// libcrun_apply_intelrdt:
//
//   - no linux.intelRdt: nothing;
//   - the class is closID, or, when closID is empty, the container's id;
//   - an explicit closID with no schema (l3CacheSchema, memBwSchema, schemata) must exist
//     already ("clos dir not accessible"); otherwise the class directory is made if missing;
//   - the init's pid is written to the class's tasks: one write, which moves one thread, so
//     only the init's leader joins the class.
//
// With -monitoring it is runc ≥ 1.4 or crun ≥ 1.25 (runtime-spec 1.3): enableMonitoring
// makes the runtime's own monitoring group <class>/mon_groups/<container id> and writes
// the pid there too, and closID "/" is the root class. Without it, runc 1.1–1.3 (and crun
// 1.10–1.23): enableMonitoring is unknown and ignored, and a closID with a "/" is refused.
//
// The tests need it because runc 1.1 quietly ignores linux.intelRdt on a host without RDT
// allocation (it wants CAT or MBA flags in /proc/cpuinfo and their info/ directories), and
// crun 1.8 has no RDT support at all: every host that runs on the simulator.
//
// With -inherit it stands in for the kernel, not the runtime, behind the real runc 1.5.1 run
// through test/e2e/rdtshim: runc made the class and its group itself and wrote the pid of its
// bootstrap process ("runc init" before nsexec) there, and the container's init, cloned
// from it with CLONE_PARENT, inherited that group. The simulator learns a new task's group
// from the proc connector's fork event, which names the creator's parent for CLONE_PARENT
// (runc run, in the root), so it puts the init in the root. -inherit writes every thread
// of the init where the kernel has them: runc's group <class>/mon_groups/<container id>
// when runc made it, else the class. It makes nothing: a class runc did not make is an
// error.
//
// Usage: classhook [-monitoring|-inherit] RESCTRL_ROOT, with the container's state on stdin.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "classhook:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	monitoring := len(args) > 0 && args[0] == "-monitoring"
	inherit := len(args) > 0 && args[0] == "-inherit"
	if monitoring || inherit {
		args = args[1:]
	}
	if len(args) != 1 {
		return fmt.Errorf("usage: classhook [-monitoring|-inherit] RESCTRL_ROOT (state on stdin)")
	}
	root := args[0]
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	var st specs.State
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	b, err = os.ReadFile(filepath.Join(st.Bundle, "config.json"))
	if err != nil {
		return err
	}
	var spec specs.Spec
	if err := json.Unmarshal(b, &spec); err != nil {
		return fmt.Errorf("config.json: %w", err)
	}
	if spec.Linux == nil || spec.Linux.IntelRdt == nil {
		return nil
	}
	rdt := spec.Linux.IntelRdt
	clos := rdt.ClosID
	switch {
	case clos == "." || clos == "..":
		return fmt.Errorf("invalid intelRdt.ClosID %q", clos)
	case clos == "/" && (monitoring || inherit):
		clos = "" // the root class, by name
	case strings.Contains(clos, "/"):
		return fmt.Errorf("invalid intelRdt.ClosID %q", clos)
	case clos == "":
		clos = st.ID
	}
	dir := filepath.Join(root, clos)
	if inherit {
		return inheritGroup(dir, st, rdt.EnableMonitoring)
	}
	if rdt.ClosID != "" && rdt.L3CacheSchema == "" && rdt.MemBwSchema == "" && len(rdt.Schemata) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return fmt.Errorf("clos dir not accessible (must be pre-created when l3CacheSchema and memBwSchema are empty): %w", err)
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	pid := []byte(strconv.Itoa(st.Pid))
	// One write, as runc's WriteIntelRdtTasks makes it.
	if err := os.WriteFile(filepath.Join(dir, "tasks"), pid, 0); err != nil {
		return err
	}
	if !monitoring || !rdt.EnableMonitoring {
		return nil
	}
	mon := filepath.Join(dir, "mon_groups", st.ID)
	if err := os.Mkdir(mon, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return os.WriteFile(filepath.Join(mon, "tasks"), pid, 0)
}

// inheritGroup writes every thread of the container's init into the group runc put its
// bootstrap process in (see -inherit): through the class, as a thread joins a monitoring
// group only from its parent class.
func inheritGroup(class string, st specs.State, monitoring bool) error {
	if _, err := os.Stat(class); err != nil {
		return fmt.Errorf("-inherit: runc made no class: %w", err)
	}
	dirs := []string{class}
	if mon := filepath.Join(class, "mon_groups", st.ID); monitoring {
		if _, err := os.Stat(mon); err == nil {
			dirs = append(dirs, mon)
		}
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", st.Pid))
	if err != nil {
		return err
	}
	for _, dir := range dirs {
		for _, t := range tasks {
			if err := os.WriteFile(filepath.Join(dir, "tasks"), []byte(t.Name()), 0); err != nil {
				return fmt.Errorf("-inherit: thread %s into %s: %w", t.Name(), dir, err)
			}
		}
	}
	return nil
}
