package hook

import (
	"os"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/ocistate"
)

// runtimeGroup says the runtime made a monitoring group of its own for the container, which
// Place removes once the container is in its pod's group (lifecycle.Placement.RuntimeGroup):
// the spec sets linux.intelRdt.enableMonitoring, and the runtime is not crun. runc ≥ 1.4
// makes <class>/mon_groups/<id> before the createRuntime hooks, never writes into it again,
// and takes its removal at delete (ENOENT ignored); runc before 1.4 makes none, and there is
// nothing to remove. crun ≥ 1.24 makes the same group, but writes every `crun exec` process
// into it (libcrun_join_process), and that write would fail, and the exec with it, were the
// group gone: crun's group is left.
//
// The runtime is told by the container's init, held by it at createRuntime (isCrun). The
// hook's own parent would not do: the worker runs it aside, not as the runtime's child.
func runtimeGroup(spec *specs.Spec, pid int) bool {
	rdt := ocistate.IntelRdt(spec)
	return rdt != nil && rdt.EnableMonitoring && !isCrun(pid)
}

// isCrun says the process is crun's: a fork of crun that has not exec'd yet, whose command
// name is crun's (runc's init names itself "runc:[2:INIT]"). Its executable's path does not
// tell: read from outside, once the init has its own root, it is "/". One whose name cannot be
// read is not taken as crun.
func isCrun(pid int) bool {
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return err == nil && strings.TrimSpace(string(comm)) == "crun"
}
