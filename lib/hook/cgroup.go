package hook

import (
	"fmt"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
)

// checkCgroup makes sure pid is the container's: the runtime put the init in the spec's
// cgroupsPath before running createRuntime hooks. A state naming another container's
// process (or the runtime's own) would otherwise move that process into this pod. It
// returns the init's cgroup v2 path from the text it read ("" when it read none), so the
// placement need not read /proc/<pid>/cgroup again.
func checkCgroup(pid int, spec *specs.Spec) (string, error) {
	if spec == nil || spec.Linux == nil || spec.Linux.CgroupsPath == "" {
		return "", nil
	}
	b, err := cgroup.Host{}.Read(pid)
	if err != nil {
		return "", fmt.Errorf("%w: %w", lifecycle.ErrBadInput, err)
	}
	if !cgroup.Matches(b, spec.Linux.CgroupsPath) {
		return "", fmt.Errorf("%w: pid %d is not in the container's cgroup %s", lifecycle.ErrBadInput, pid, spec.Linux.CgroupsPath)
	}
	v2, _ := cgroup.ParseV2(b) // "" on a cgroup v1 only host: no pressure to read
	return v2, nil
}
