package psi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moby/sys/mountinfo"

	"github.com/resctrl-mon/resctrl-mon/lib/clip"
)

// Host reads a machine's cgroup v2 facts through a procfs mount.
type Host struct {
	// Proc is where procfs is mounted; "/proc" when empty. Tests give a tree of their own.
	Proc string
}

func (h Host) proc(elem ...string) string {
	root := h.Proc
	if root == "" {
		root = "/proc"
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

var (
	// ErrNoUnified: the process is in no cgroup v2 hierarchy (a cgroup v1 only host).
	ErrNoUnified = errors.New("no cgroup v2 (0::) line")
	// ErrNotMounted: no cgroup2 mount shows the cgroup.
	ErrNotMounted = errors.New("no cgroup2 mount shows the cgroup")
)

// maxCgroupFile bounds /proc/<pid>/cgroup: one line per hierarchy.
const maxCgroupFile = 64 << 10

// ParseCgroup returns the cgroup v2 path from the content of /proc/<pid>/cgroup: the path
// on its "0::" line, relative to the reader's cgroup namespace (so it starts with "/.." for
// a cgroup outside it).
func ParseCgroup(r io.Reader) (string, error) {
	sc := bufio.NewScanner(io.LimitReader(r, maxCgroupFile))
	sc.Buffer(nil, maxCgroupFile)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
			if !strings.HasPrefix(p, "/") {
				return "", fmt.Errorf("cgroup v2 path %q is not absolute", clip.String(p))
			}
			return p, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", ErrNoUnified
}

// CgroupOf returns pid's cgroup v2 path, as this process's cgroup namespace sees it.
func (h Host) CgroupOf(pid int) (string, error) {
	f, err := os.Open(h.proc(strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return "", fmt.Errorf("cgroup of pid %d: %w", pid, err)
	}
	defer f.Close()
	p, err := ParseCgroup(f)
	if err != nil {
		return "", fmt.Errorf("cgroup of pid %d: %w", pid, err)
	}
	return p, nil
}

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
