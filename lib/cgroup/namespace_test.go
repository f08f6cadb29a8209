package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A process in a cgroup namespace of its own, with its own cgroup2 mount, as a container
// on a pure cgroup v2 host is: through its mount we reach the same directory as through ours.
func TestDirThroughCgroupNamespace(t *testing.T) {
	t.Parallel()
	cg := newCgroup(t)
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		skipOrFail(t, "no unshare: %v", err)
	}
	// Into the cgroup first, so the new cgroup namespace is rooted there; a private mount
	// namespace for the cgroup2 mount, which then shows the namespace's root.
	script := fmt.Sprintf(`echo $$ > %s/cgroup.procs || exit 1
exec %s --cgroup --mount --propagation private -- sh -c 'mount -t cgroup2 cgroup2 /sys/fs/cgroup && echo ready && exec sleep 1000'`, cg, unshare)
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	if line, err := bufio.NewReader(out).ReadString('\n'); strings.TrimSpace(line) != "ready" {
		t.Fatalf("namespaced process did not start: %q, %v", line, err)
	}
	pid := cmd.Process.Pid
	h := Host{}
	cgPath, err := h.CgroupOf(pid)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := h.Dir(cgPath)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := h.dirThrough(pid, cgPath)
	if err != nil {
		t.Fatal(err)
	}
	if theirs != filepath.Join("/proc", fmt.Sprint(pid), "root", "sys", "fs", "cgroup") {
		t.Errorf("through its mount: %s", theirs)
	}
	a, err1 := os.Stat(ours)
	b, err2 := os.Stat(theirs)
	if err := errors.Join(err1, err2); err != nil || !os.SameFile(a, b) {
		t.Errorf("%s and %s are not the same directory (%v)", ours, theirs, err)
	}
	procs, err := os.ReadFile(filepath.Join(theirs, "cgroup.procs"))
	if err != nil || !containsLine(string(procs), fmt.Sprint(pid)) {
		t.Errorf("cgroup.procs through its mount: %q, %v; want %d", procs, err, pid)
	}
}
