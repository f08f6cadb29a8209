package cgroup

import (
	"fmt"
	"slices"
	"strings"
)

// Matches reports whether a /proc/<pid>/cgroup text places the process in the cgroup an OCI
// spec's linux.cgroupsPath names, in some hierarchy: a path as is (absolute, or relative to
// the runtime's own cgroup), or the systemd driver's "slice:prefix:name" as its unit
// "prefix-name.scope". It needs neither the cgroup driver nor the version.
func Matches(text []byte, cgroupsPath string) bool {
	want := cgroupSuffix(cgroupsPath)
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

// cgroupSuffix turns a spec's cgroupsPath into what /proc/<pid>/cgroup shows.
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

// Index maps each distinct /proc/<pid>/cgroup content to the processes that have it: read
// once, it answers "which processes share this container's cgroups" for every container,
// without knowing the cgroup driver or version.
type Index map[string][]int

// Index reads every process's cgroups.
func (h Host) Index() (Index, error) {
	pids, err := h.pids()
	if err != nil {
		return nil, err
	}
	idx := Index{}
	for _, p := range pids {
		if b, err := h.Read(p); err == nil {
			idx[string(b)] = append(idx[string(b)], p)
		}
	}
	return idx, nil
}

// Peers lists the processes in exactly the cgroups of pid (pid included), and returns those
// cgroups as /proc/<pid>/cgroup shows them, for Host.Still.
func (idx Index) Peers(h Host, pid int) (cgroups string, pids []int) {
	b, err := h.Read(pid)
	if err != nil {
		return "", nil
	}
	return string(b), idx[string(b)]
}

// In lists the processes of the index in the cgroup cgroupsPath names (see Matches), lowest
// pid first: one reading of every process answers for many containers.
func (idx Index) In(cgroupsPath string) []int {
	if w := cgroupSuffix(cgroupsPath); w == "" || w == "/" {
		return nil
	}
	var out []int
	for text, pids := range idx {
		if Matches([]byte(text), cgroupsPath) {
			out = append(out, pids...)
		}
	}
	slices.Sort(out)
	return out
}

// ProcessesIn lists the processes in the cgroup cgroupsPath names (see Matches), lowest pid
// first. It reads every process's cgroup file: for a front end whose runtime gives no pid
// (CRI-O's NRI before 1.36), not for a hot path.
func (h Host) ProcessesIn(cgroupsPath string) ([]int, error) {
	if w := cgroupSuffix(cgroupsPath); w == "" || w == "/" {
		return nil, fmt.Errorf("cgroupsPath %q names no container's cgroup", cgroupsPath)
	}
	idx, err := h.Index()
	if err != nil {
		return nil, err
	}
	return idx.In(cgroupsPath), nil
}
