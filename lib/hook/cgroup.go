package hook

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
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
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return "", fmt.Errorf("%w: pid %d: %w", lifecycle.ErrBadInput, pid, err)
	}
	if !inCgroup(b, cgroupSuffix(spec.Linux.CgroupsPath)) {
		return "", fmt.Errorf("%w: pid %d is not in the container's cgroup %s", lifecycle.ErrBadInput, pid, spec.Linux.CgroupsPath)
	}
	return procfs.ParseCgroupV2(b), nil
}

// inCgroup reports whether a /proc/<pid>/cgroup text places the process in want in some
// hierarchy.
func inCgroup(text []byte, want string) bool {
	if want == "" || want == "/" {
		return false
	}
	for line := range strings.SplitSeq(string(text), "\n") {
		// "hierarchy-ID:controller-list:cgroup-path"
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && (parts[2] == want || strings.HasSuffix(parts[2], "/"+strings.TrimPrefix(want, "/"))) {
			return true
		}
	}
	return false
}

// cgroupSuffix turns a spec's cgroupsPath into what /proc/<pid>/cgroup shows: a path as is,
// or for the systemd driver's "slice:prefix:name" the unit "prefix-name.scope".
func cgroupSuffix(p string) string {
	parts := strings.Split(p, ":")
	if len(parts) != 3 || strings.HasPrefix(p, "/") {
		return p
	}
	if parts[1] == "" {
		return parts[2] + ".scope"
	}
	return parts[1] + "-" + parts[2] + ".scope"
}
