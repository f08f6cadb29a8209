package cgroup

import (
	"errors"
	"fmt"
)

// ErrElsewhere: a process is not in the cgroup its runtime named for the container it is
// said to be the init of.
var ErrElsewhere = errors.New("not in the container's cgroup")

// Check makes sure pid is in the cgroup an OCI spec's linux.cgroupsPath names (see Matches):
// a runtime puts a container's init there before anyone is told its pid, so a pid elsewhere
// is another process (the runtime's own, another container's, or one given the pid after the
// init exited), which a writer would otherwise move into this container's pod. It returns the
// process's cgroup v2 path from the text it read ("" on a cgroup v1 only host), so the caller
// need not read /proc/<pid>/cgroup again. The hook and the NRI adapter both check with it.
func (h Host) Check(pid int, cgroupsPath string) (string, error) {
	b, err := h.Read(pid)
	if err != nil {
		return "", err
	}
	if !Matches(b, cgroupsPath) {
		return "", fmt.Errorf("pid %d is %w %s", pid, ErrElsewhere, cgroupsPath)
	}
	v2, _ := ParseV2(b) // "" on a cgroup v1 only host: no pressure to read
	return v2, nil
}
