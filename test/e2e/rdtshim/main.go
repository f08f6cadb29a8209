// Command rdtshim runs the real runc (≥ 1.4) so that it applies linux.intelRdt, and with
// it enableMonitoring, on the resctrl simulator (test/resctrlsim), for the tests only.
//
// runc's intelrdt.Root takes resctrl to be there only when statfs("/sys/fs/resctrl") says
// RDTGROUP_SUPER_MAGIC (or a mountinfo entry has the fstype "resctrl", which a FUSE mount,
// "fuse.<subtype>", never has). This host has no RDT: no /sys/fs/resctrl at all, and the
// simulator is a FUSE mount. So the shim runs runc unchanged, with two things around it:
//
//   - a private mount namespace where /sys/fs/resctrl is the simulator's mount (sysfs
//     refuses mkdir, so /sys/fs becomes a tmpfs holding binds of its entries and the new
//     directory);
//   - a seccomp filter on statfs whose calls a supervisor outside the filter answers (user
//     notification): statfs of exactly "/sys/fs/resctrl" gets the kernel's own answer
//     for that path with the type set to RDTGROUP_SUPER_MAGIC; every other call goes on
//     to the kernel untouched.
//
// Everything else is runc's own code: its checks, its mkdir of the class and of
// mon_groups/<id>, its writes of the init's pid, its removal at delete.
//
// Usage: rdtshim RUNC_ARGS..., with RDTSHIM_RUNC (the runc binary), RDTSHIM_RESCTRL (the
// simulator's mount) and RDTSHIM_DIR (where each supervisor keeps a pid file while it
// lives, and a log of the answers it faked) in the environment.
//
// Go runs no code between fork and exec, so the shim is three stages of this one binary,
// told apart by RDTSHIM_STAGE:
//
//   - the launcher (no stage) starts the supervisor, detached, then the filter stage in a
//     new mount namespace, and exits with that stage's (runc's) status;
//   - the filter stage makes the mounts, installs the filter (it is root: no
//     no_new_privs needed), hands the listener to the supervisor over an inherited socket
//     (SCM_RIGHTS), and execs runc, which its children (runc init, the container, the
//     hooks) inherit;
//   - the supervisor answers until no task under the filter is left (the listener then
//     polls POLLHUP): a container started by `runc run --detach` outlives runc, and its
//     supervisor lives as long as it does.
//
// Only linux/amd64: the filter matches the x86_64 statfs by number.
package main

import (
	"fmt"
	"os"
)

// The environment the shim reads.
const (
	envStage   = "RDTSHIM_STAGE"
	envRunc    = "RDTSHIM_RUNC"
	envResctrl = "RDTSHIM_RESCTRL"
	envDir     = "RDTSHIM_DIR"
)

// resctrlMount is where runc looks for resctrl (intelrdt.defaultResctrlMountpoint).
const resctrlMount = "/sys/fs/resctrl"

func main() {
	var err error
	switch stage := os.Getenv(envStage); stage {
	case "":
		var code int
		code, err = launch(os.Args[1:])
		if err == nil {
			os.Exit(code)
		}
	case "filter":
		err = filterAndExec(os.Args[1:]) // returns only on failure
	case "supervise":
		err = supervise()
	default:
		err = fmt.Errorf("unknown %s=%q", envStage, stage)
	}
	if err == nil {
		os.Exit(0)
	}
	fmt.Fprintln(os.Stderr, "rdtshim:", err)
	os.Exit(125)
}
