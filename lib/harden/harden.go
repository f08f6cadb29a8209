// Package harden closes what a long-running resctrl-mon process leaves open to the other
// processes of its host.
//
// The NRI adapter, `resctrl-mon serve`, `reconcile --every` and the sidecar run as uid 0,
// often with every capability dropped, in the host's PID namespace. A process is "dumpable"
// by default, and for a dumpable process the kernel's ptrace access check
// (ptrace_may_access, PTRACE_MODE_READ) lets any process with the same uids and no fewer
// capabilities read /proc/<pid>/root, /proc/<pid>/cwd, /proc/<pid>/fd/*, environ and mem:
// any other root pod with hostPID, its capabilities dropped as well, would reach the
// adapter's NRI socket and the host mounts the process sees through /proc/<pid>/root.
// Non-dumpable, those need CAP_SYS_PTRACE over the process's user namespace.
//
// What stays as it was: the process reading its own /proc/self (the kernel always lets a
// thread group read itself), children started from /proc/self/exe (execve makes them
// dumpable again, and their parent reads their /proc files as before), /proc/<pid>/stat,
// status and cgroup (world-readable, no ptrace check), and no core dumps (a dump could hold
// what the process read).
package harden

import (
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// NonDumpable makes the calling process non-dumpable (PR_SET_DUMPABLE 0), for all its
// threads; execve undoes it for the program execed. A failure is written to warn: it leaves
// the process as it was, no reason not to run.
func NonDumpable(warn io.Writer) {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(warn, "resctrl-mon: could not make the process non-dumpable (PR_SET_DUMPABLE): %v; its /proc files stay open to processes of the same uid\n", err)
	}
}

// Dumpable says whether the calling process is dumpable (PR_GET_DUMPABLE).
func Dumpable() (bool, error) {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil {
		return false, fmt.Errorf("PR_GET_DUMPABLE: %w", err)
	}
	return v != 0, nil
}
