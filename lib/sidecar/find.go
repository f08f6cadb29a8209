package sidecar

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/moby/sys/mountinfo"
)

// ErrNotFound: no process is the container (yet).
var ErrNotFound = errors.New("container not found")

// finder returns the pid of a process of the container, in the procfs at proc.
type finder func() (int, error)

// processes lists the pids in proc, lowest first (a container's init before the processes
// it forks, the order in which cgroup_monitor_sc's walk of /proc finds them, so both pick
// the same process), less our own.
func processes(proc string) ([]int, error) {
	es, err := os.ReadDir(proc)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	self := -1
	if s, err := os.Readlink(filepath.Join(proc, "self")); err == nil {
		self, _ = strconv.Atoi(s)
	}
	var pids []int
	for _, e := range es {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 && pid != self {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids, nil
}

// byPID is the process given on the command line.
func byPID(proc string, pid int) finder {
	return func() (int, error) {
		if _, err := os.Stat(filepath.Join(proc, strconv.Itoa(pid))); err != nil {
			return 0, fmt.Errorf("%w: pid %d: %w", ErrNotFound, pid, err)
		}
		return pid, nil
	}
}

// byFlag is cgroup_monitor_sc's discovery: the first process whose flagPath, inside its own root,
// holds want. Another process's root is readable only with ptrace access to it; how many
// were not is part of the error, since that is the usual reason for finding nothing.
func byFlag(proc, flagPath, want string) finder {
	return func() (int, error) {
		pids, err := processes(proc)
		if err != nil {
			return 0, err
		}
		denied := 0
		for _, pid := range pids {
			b, err := readInRoot(filepath.Join(proc, strconv.Itoa(pid), "root"), flagPath, maxFlagSize)
			if errors.Is(err, fs.ErrPermission) {
				denied++
			}
			if err == nil && strings.TrimSpace(string(b)) == want {
				return pid, nil
			}
		}
		return 0, fmt.Errorf("%w: no process has %s holding %q%s", ErrNotFound, flagPath, want, deniedHint(denied))
	}
}

func deniedHint(denied int) string {
	if denied == 0 {
		return ""
	}
	return fmt.Sprintf(" (the root of %d processes could not be read: permission denied; the sidecar needs the "+
		"target's user and no fewer capabilities than it, or CAP_SYS_PTRACE)", denied)
}

// byName finds the process of the Kubernetes container name: the kubelet bind-mounts
// <root-dir>/pods/<pod uid>/containers/<name>/<random id> at the container's termination
// message path (kuberuntime makeMounts), and mountinfo shows that source path to anyone.
// A sidecar on a node (not in the pod) may see the name in several pods: that is refused.
func byName(proc, name string) finder {
	return func() (int, error) {
		pids, err := processes(proc)
		if err != nil {
			return 0, err
		}
		found, pods := 0, map[string]bool{}
		for _, pid := range pids {
			uid, ok := kubeletContainer(filepath.Join(proc, strconv.Itoa(pid), "mountinfo"), name)
			if !ok {
				continue
			}
			if found == 0 {
				found = pid
			}
			pods[uid] = true
		}
		switch {
		case found == 0:
			return 0, fmt.Errorf("%w: no process has the kubelet's termination-log mount of a container named %q", ErrNotFound, name)
		case len(pods) > 1:
			return 0, fmt.Errorf("container name %q is in %d pods (%s): give --pid", name, len(pods), strings.Join(slices.Sorted(maps.Keys(pods)), ", "))
		}
		return found, nil
	}
}

// kubeletContainer reports whether the mountinfo at path has a kubelet container mount of
// name, and the pod UID in its path.
func kubeletContainer(path, name string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	var uid string
	_, _ = mountinfo.GetMountsFromReader(f, func(m *mountinfo.Info) (skip, stop bool) {
		if u, ok := kubeletMountRoot(m.Root, name); ok {
			uid = u
			return true, true
		}
		return true, false
	})
	return uid, uid != ""
}

// kubeletMountRoot matches a mount source ending in pods/<uid>/containers/<name>/<id>.
func kubeletMountRoot(root, name string) (string, bool) {
	c := strings.Split(root, "/")
	n := len(c)
	if n < 5 || c[n-5] != "pods" || c[n-3] != "containers" || c[n-2] != name || c[n-4] == "" || c[n-1] == "" {
		return "", false
	}
	return c[n-4], true
}
