package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moby/sys/mountinfo"
)

// ErrNotMounted: no cgroup2 mount shows the cgroup.
var ErrNotMounted = errors.New("no cgroup2 mount shows the cgroup")

// Dir returns the directory of a cgroup v2 path (as CgroupOf gives it) through this
// process's own cgroup2 mounts.
func (h Host) Dir(cgroup string) (string, error) {
	mounts, err := cgroup2Mounts(h.proc("self", "mountinfo"))
	if err != nil {
		return "", err
	}
	dir, ok := dirIn(mounts, cgroup)
	if !ok {
		return "", fmt.Errorf("%w %s (cgroup2 mounts: %s)", ErrNotMounted, cgroup, describe(mounts))
	}
	return dir, nil
}

// Root finds where this process sees the whole cgroup v2 hierarchy (/sys/fs/cgroup on a
// pure v2 host, /sys/fs/cgroup/unified on a hybrid one), once: readers that keep cgroup paths
// relative to it (the registry does) join them to it. A failure is retried at the next call.
// Not safe for concurrent use.
type Root struct {
	Host Host
	dir  string
}

// Dir is the hierarchy's directory.
func (r *Root) Dir() (string, error) {
	if r.dir != "" {
		return r.dir, nil
	}
	dir, err := r.Host.Dir("/")
	if err != nil {
		return "", err
	}
	r.dir = dir
	return dir, nil
}

// ProcessDir returns the directory of pid's cgroup v2: through this process's own mounts
// when they show it (on the host, or in a container sharing the host's cgroup namespace),
// else through pid's own cgroup2 mount under /proc/<pid>/root (a sidecar and the container
// it watches are in different cgroup namespaces; reading another process's root needs
// ptrace access to it: same user and no more capabilities than ours, or CAP_SYS_PTRACE).
func (h Host) ProcessDir(pid int) (string, error) {
	cg, err := h.CgroupOf(pid)
	if err != nil {
		return "", err
	}
	own, err := h.Dir(cg)
	if err == nil {
		if _, err = os.Stat(own); err == nil {
			return own, nil
		}
	}
	theirs, terr := h.dirThrough(pid, cg)
	if terr != nil {
		return "", fmt.Errorf("cgroup %s of pid %d: through our mounts: %w; through its own: %w", cg, pid, err, terr)
	}
	return theirs, nil
}

// dirThrough finds cgroup under pid's own cgroup2 mounts, reached through /proc/<pid>/root.
// Both mountinfo's root field and /proc/<pid>/cgroup are shown relative to the reader's
// cgroup namespace, so they compare.
func (h Host) dirThrough(pid int, cgroup string) (string, error) {
	p := strconv.Itoa(pid)
	mounts, err := cgroup2Mounts(h.proc(p, "mountinfo"))
	if err != nil {
		return "", err
	}
	dir, ok := dirIn(mounts, cgroup)
	if !ok {
		return "", fmt.Errorf("%w %s (its cgroup2 mounts: %s)", ErrNotMounted, cgroup, describe(mounts))
	}
	dir = h.proc(p, "root", dir)
	if _, err := os.Stat(dir); err != nil {
		return "", err
	}
	return dir, nil
}

func cgroup2Mounts(path string) ([]*mountinfo.Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mounts: %w", err)
	}
	defer f.Close()
	ms, err := mountinfo.GetMountsFromReader(f, mountinfo.FSTypeFilter("cgroup2"))
	if err != nil {
		return nil, fmt.Errorf("mounts %s: %w", path, err)
	}
	return ms, nil
}

// dirIn returns where cgroup is under the mount whose root holds it most closely. A path
// that leaves a mount's root ("/../x" from another cgroup namespace) is not under it:
// joining it would name a directory that is not the cgroup.
func dirIn(mounts []*mountinfo.Info, cgroup string) (string, bool) {
	best, bestRoot := "", -1
	for _, m := range mounts {
		rel, ok := under(m.Root, cgroup)
		if !ok || len(m.Root) <= bestRoot {
			continue
		}
		best, bestRoot = filepath.Join(m.Mountpoint, rel), len(m.Root)
	}
	return best, bestRoot >= 0
}

func under(root, path string) (string, bool) {
	var rel string
	switch {
	case root == "/":
		rel = path
	case path == root:
		rel = "/"
	case strings.HasPrefix(path, root+"/"):
		rel = path[len(root):]
	default:
		return "", false
	}
	for _, c := range strings.Split(rel, "/") {
		if c == ".." {
			return "", false
		}
	}
	return rel, true
}

func describe(ms []*mountinfo.Info) string {
	if len(ms) == 0 {
		return "none"
	}
	var s []string
	for _, m := range ms {
		s = append(s, fmt.Sprintf("%s (root %s)", m.Mountpoint, m.Root))
	}
	return strings.Join(s, ", ")
}
