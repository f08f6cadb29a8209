package nriplugin

import (
	"fmt"

	"github.com/containerd/nri/pkg/api"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
)

// checkInit makes sure pid is the container's init right before the adapter moves it (and,
// late, every task of its cgroup): in the container's cgroup, as the hook checks it
// (cgroup.Host.Check), and the same process throughout the check. NRI's pid is a number the
// runtime read earlier; an init that exited meanwhile leaves its pid to the next process,
// maybe another pod's, whose tasks would be moved here and pin this group's RMID. The start
// time (/proc/<pid>/stat field 22) read before and after the cgroup says the process found in
// the cgroup is the one whose pid it was. It returns the init's cgroup v2 path ("" when
// unknown), for the record. A container with no cgroupsPath (no runtime sends none) is taken
// on the pid alone, as the hook takes a spec without one.
func checkInit(pid int, ctr *api.Container) (string, error) {
	path := ctr.GetLinux().GetCgroupsPath()
	if path == "" {
		return "", nil
	}
	before, err := procfs.ReadStat(pid)
	if err != nil {
		return "", fmt.Errorf("the init: %w", err)
	}
	v2, err := cgroup.Host{}.Check(pid, path)
	if err != nil {
		return "", err
	}
	after, err := procfs.ReadStat(pid)
	if err != nil {
		return "", fmt.Errorf("the init: %w", err)
	}
	if after.StartTime != before.StartTime {
		return "", fmt.Errorf("pid %d was given to another process while it was checked (started at tick %d, now %d): %w",
			pid, before.StartTime, after.StartTime, cgroup.ErrElsewhere)
	}
	return v2, nil
}
