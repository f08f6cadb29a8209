package k8s

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// unifiedRoot is where the host's cgroup v2 tree is: /sys/fs/cgroup/unified on a hybrid
// host, /sys/fs/cgroup on a pure v2 one.
func unifiedRoot() string {
	if _, err := os.Stat("/sys/fs/cgroup/unified/cgroup.procs"); err == nil {
		return "/sys/fs/cgroup/unified"
	}
	return "/sys/fs/cgroup"
}

// containerCgroup finds the cgroup kubelet's cgroupfs driver gave a container of pod uid
// (containerd: pod<uid>/<id>; CRI-O: pod<uid>/crio-<id>).
func containerCgroup(uid, id string) (string, error) {
	for _, pat := range []string{"kubepods/*/pod%s/%s", "kubepods/pod%s/%s", "kubepods/*/pod%s/crio-%s", "kubepods/pod%s/crio-%s"} {
		m, _ := filepath.Glob(filepath.Join(unifiedRoot(), fmt.Sprintf(pat, uid, id)))
		if len(m) == 1 {
			return m[0], nil
		}
	}
	return "", fmt.Errorf("no cgroup of container %s of pod %s under %s/kubepods", id, uid, unifiedRoot())
}

// threads lists every thread in a cgroup.
func threads(cgroup string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(cgroup, "cgroup.threads"))
	if err != nil {
		return nil, err
	}
	return ints(string(b))
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Fields(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// Placement is how many of a pod's containers' threads are in its group.
type Placement struct {
	Placed, Total int
	Missing       []int
}

func (p Placement) String() string {
	return fmt.Sprintf("placed %d of %d", p.Placed, p.Total)
}

// Pod is what the API says of a pod.
type Pod struct {
	Name, Namespace, UID string
	Annotations          map[string]string
	Containers           []ContainerStatus
	// Terminating: the pod is being deleted (its deletionTimestamp is set).
	Terminating bool
}

// ContainerStatus is a container's part of a pod's status.
type ContainerStatus struct {
	Name         string
	ID           string // without the runtime:// prefix
	RestartCount int
	Running      bool
}

// GetPod reads a pod through kubectl.
func (c *Cluster) GetPod(ns, name string) (Pod, error) {
	out, err := c.TryKubectl("-n", ns, "get", "pod", name, "-o", "json")
	if err != nil {
		return Pod{}, err
	}
	return parsePod([]byte(out))
}

// PodsOf lists the pods a label selector names.
func (c *Cluster) PodsOf(ns, selector string) ([]Pod, error) {
	out, err := c.TryKubectl("-n", ns, "get", "pods", "-l", selector, "-o", "json")
	if err != nil {
		return nil, err
	}
	var l struct{ Items []json.RawMessage }
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		return nil, err
	}
	var pods []Pod
	for _, it := range l.Items {
		p, err := parsePod(it)
		if err != nil {
			return nil, err
		}
		pods = append(pods, p)
	}
	return pods, nil
}

func parsePod(b []byte) (Pod, error) {
	var raw struct {
		Metadata struct {
			Name, Namespace, UID string
			Annotations          map[string]string
			DeletionTimestamp    *string
		}
		Status struct {
			ContainerStatuses []struct {
				Name         string
				ContainerID  string
				RestartCount int
				State        map[string]any
			}
		}
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Pod{}, fmt.Errorf("pod JSON: %w", err)
	}
	p := Pod{Name: raw.Metadata.Name, Namespace: raw.Metadata.Namespace, UID: raw.Metadata.UID, Annotations: raw.Metadata.Annotations,
		Terminating: raw.Metadata.DeletionTimestamp != nil}
	for _, cs := range raw.Status.ContainerStatuses {
		_, id, _ := strings.Cut(cs.ContainerID, "://")
		_, running := cs.State["running"]
		p.Containers = append(p.Containers, ContainerStatus{Name: cs.Name, ID: id, RestartCount: cs.RestartCount, Running: running})
	}
	return p, nil
}

// groupOf is the resctrl group resctrl-mon gives a pod: mon_groups/<uid>, the UID in its
// canonical dashed form (a static pod's 32-hex config hash gets dashes).
func groupOf(uid string) string {
	u := strings.ToLower(uid)
	if len(u) == 32 && !strings.Contains(u, "-") {
		u = u[:8] + "-" + u[8:12] + "-" + u[12:16] + "-" + u[16:20] + "-" + u[20:]
	}
	return "mon_groups/" + u
}

// Placed compares the threads of the pod's running containers (those named, or all) with
// the tasks of the pod's group. cgroupUID is the UID kubelet named the pod's cgroup with
// (for a static pod, the config hash, not the mirror pod's UID).
func Placed(resctrl string, p Pod, cgroupUID string, names ...string) (Placement, error) {
	b, err := os.ReadFile(filepath.Join(resctrl, groupOf(cgroupUID), "tasks"))
	if err != nil {
		return Placement{}, err
	}
	in, err := ints(string(b))
	if err != nil {
		return Placement{}, err
	}
	var pl Placement
	for _, c := range p.Containers {
		if !c.Running || (len(names) > 0 && !slices.Contains(names, c.Name)) {
			continue
		}
		cg, err := containerCgroup(strings.ReplaceAll(cgroupUID, "-", "_"), c.ID)
		if err != nil {
			cg, err = containerCgroup(cgroupUID, c.ID)
		}
		if err != nil {
			return pl, err
		}
		ts, err := threads(cg)
		if err != nil {
			return pl, err
		}
		for _, tid := range ts {
			pl.Total++
			if slices.Contains(in, tid) {
				pl.Placed++
			} else {
				pl.Missing = append(pl.Missing, tid)
			}
		}
	}
	return pl, nil
}
