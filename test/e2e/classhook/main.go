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
// Usage: classhook [-monitoring] RESCTRL_ROOT, with the container's state on stdin.
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
	if monitoring {
		args = args[1:]
	}
	if len(args) != 1 {
		return fmt.Errorf("usage: classhook [-monitoring] RESCTRL_ROOT (state on stdin)")
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
	case clos == "/" && monitoring:
		clos = "" // the root class, by name
	case strings.Contains(clos, "/"):
		return fmt.Errorf("invalid intelRdt.ClosID %q", clos)
	case clos == "":
		clos = st.ID
	}
	dir := filepath.Join(root, clos)
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
