// Command classhook does, as a createRuntime hook run ahead of resctrl-mon's, what runc's
// intelrdt manager does before any hook on a host with RDT: it writes the container init's
// pid into the tasks file of the class named by the bundle's linux.intelRdt.closID. A tasks
// write moves one thread, so, as with runc, only the init's leader joins the class.
//
// The tests need it because runc 1.1 quietly ignores linux.intelRdt on a host without RDT
// hardware (it looks for RDT flags in /proc/cpuinfo and a mount of type resctrl), which is
// every host that runs on the simulator.
//
// Usage: classhook RESCTRL_ROOT, with the container's state on stdin.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "classhook:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: classhook RESCTRL_ROOT (state on stdin)")
	}
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
	if spec.Linux == nil || spec.Linux.IntelRdt == nil || spec.Linux.IntelRdt.ClosID == "" {
		return nil
	}
	tasks := filepath.Join(os.Args[1], spec.Linux.IntelRdt.ClosID, "tasks")
	// One write, as runc's WriteIntelRdtTasks makes it.
	return os.WriteFile(tasks, []byte(strconv.Itoa(st.Pid)), 0)
}
