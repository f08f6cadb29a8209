package hook

import (
	"fmt"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
)

// checkCgroup makes sure pid is the container's (cgroup.Host.Check, the NRI adapter's check
// too): the runtime put the init in the spec's cgroupsPath before running createRuntime
// hooks. A state naming another container's process (or the runtime's own) would otherwise
// move that process into this pod. It returns the init's cgroup v2 path from the text it read
// ("" when it read none), so the placement need not read /proc/<pid>/cgroup again.
func checkCgroup(pid int, spec *specs.Spec) (string, error) {
	if spec == nil || spec.Linux == nil || spec.Linux.CgroupsPath == "" {
		return "", nil
	}
	v2, err := cgroup.Host{}.Check(pid, spec.Linux.CgroupsPath)
	if err != nil {
		return "", fmt.Errorf("%w: %w", lifecycle.ErrBadInput, err)
	}
	return v2, nil
}
