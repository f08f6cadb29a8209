package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/resctrl-mon/resctrl-mon/lib/clip"
	"github.com/resctrl-mon/resctrl-mon/lib/sysfile"
)

// Host reads a machine's cgroup facts through a procfs mount. The zero value reads /proc.
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

// ErrNoUnified: the process is in no cgroup v2 hierarchy (a cgroup v1 only host).
var ErrNoUnified = errors.New("no cgroup v2 (0::) line")

// maxCgroupFile bounds /proc/<pid>/cgroup: one line per hierarchy.
const maxCgroupFile = 64 << 10

// Read reads /proc/<pid>/cgroup (pid may be a thread's id: /proc/<tid> is there, unlisted).
func (h Host) Read(pid int) ([]byte, error) {
	b, err := sysfile.ReadFile(h.proc(strconv.Itoa(pid), "cgroup"), 0, maxCgroupFile)
	if err != nil {
		return nil, fmt.Errorf("cgroup of pid %d: %w", pid, err)
	}
	return b, nil
}

// ParseV2 returns the cgroup v2 path from the content of /proc/<pid>/cgroup: the path on its
// "0::" line (see the package doc). ErrNoUnified when there is none.
func ParseV2(b []byte) (string, error) {
	for line := range strings.SplitSeq(string(b), "\n") {
		p, ok := strings.CutPrefix(line, "0::")
		if !ok {
			continue
		}
		if !strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
			return "", fmt.Errorf("cgroup v2 path %q is not an absolute path", clip.String(p))
		}
		return p, nil
	}
	return "", ErrNoUnified
}

// CgroupOf returns pid's cgroup v2 path, as this process's cgroup namespace sees it.
func (h Host) CgroupOf(pid int) (string, error) {
	b, err := h.Read(pid)
	if err != nil {
		return "", err
	}
	p, err := ParseV2(b)
	if err != nil {
		return "", fmt.Errorf("cgroup of pid %d: %w", pid, err)
	}
	return p, nil
}

// Still reports whether task (a process or a thread) is now in exactly cgroups, a
// /proc/<pid>/cgroup text as Index.Peers returned it. A writer that found the task in an
// index read earlier checks it again right before its write: a pid that exited meanwhile may
// be another container's process now.
func (h Host) Still(task int, cgroups string) bool {
	b, err := h.Read(task)
	return err == nil && cgroups != "" && bytes.Equal(b, []byte(cgroups))
}

// pids lists the processes under the procfs.
func (h Host) pids() ([]int, error) {
	es, err := os.ReadDir(h.proc())
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	out := make([]int, 0, len(es))
	for _, e := range es {
		if p, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, p)
		}
	}
	return out, nil
}
