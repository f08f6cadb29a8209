// Package proctest starts real processes that stand in for a container's init in the tests:
// held before they run their workload, as a runtime holds its init until the container
// starts, and each in a cgroup of its own, as a runtime puts a container (lifecycle finds a
// container's processes by their cgroups).
package proctest

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// cgroupRoot is the cgroup v1 pids hierarchy: present on the hybrid hosts this runs on, and
// a controller whose groups cost nothing to make.
const cgroupRoot = "/sys/fs/cgroup/pids"

var seq atomic.Int64

// Init is a held process: a shell that waits for a line on its stdin, then execs the
// workload.
type Init struct {
	Pid    int
	Cgroup string // the cgroup directory
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
}

// Hold starts sh, moves it into a new cgroup and leaves it waiting before it execs
// workload (a shell command line). Release lets it run. The process is killed and its
// cgroup removed when the test ends.
func Hold(t testing.TB, workload string) *Init {
	t.Helper()
	return hold(t, "sh", workload)
}

func hold(t testing.TB, sh, workload string) *Init {
	t.Helper()
	dir := filepath.Join(cgroupRoot, "resctrl-mon-test-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(seq.Add(1), 10))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("needs the cgroup v1 pids hierarchy (root): %v", err)
	}
	// read, then exec: the pid stays the init's, as a runtime's init execs the container's.
	cmd := exec.Command(sh, "-c", "read go; exec "+workload)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in := &Init{Pid: cmd.Process.Pid, Cgroup: dir, cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	t.Cleanup(func() { in.Kill(); removeCgroup(dir) })
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(in.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// HoldAs is Hold with the held shell under the command name comm (up to 15 bytes), as a
// runtime's init names itself while it is held (runc's "runc:[2:INIT]", crun's "crun"): the
// shell runs through a link so named. The workload's exec gives it the workload's name.
func HoldAs(t testing.TB, comm, workload string) *Init {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), comm)
	if err := os.Symlink(sh, link); err != nil {
		t.Fatal(err)
	}
	return hold(t, link, workload)
}

// Release lets the held init exec its workload.
func (in *Init) Release(t testing.TB) {
	t.Helper()
	if _, err := io.WriteString(in.stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
}

// WaitLine waits for the workload to print line (the forker prints "ready").
func (in *Init) WaitLine(t testing.TB, line string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		for {
			l, err := in.out.ReadString('\n')
			if err != nil {
				done <- err
				return
			}
			if strings.TrimSpace(l) == line {
				done <- nil
				return
			}
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("pid %d ended before printing %q: %v", in.Pid, line, err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("pid %d did not print %q within 20s", in.Pid, line)
	}
}

// WaitTasks waits until the init's cgroup holds at least n tasks: a workload that forks in
// the background says "ready" before its children have all forked.
func (in *Init) WaitTasks(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(in.Tasks(t)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: %d tasks in its cgroup after 20s, want %d", in.Pid, len(in.Tasks(t)), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Tasks lists every thread of every process in the init's cgroup.
func (in *Init) Tasks(t testing.TB) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(in.Cgroup, "tasks"))
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}

// Kill ends every process of the init's cgroup and waits for the init.
func (in *Init) Kill() {
	if b, err := os.ReadFile(filepath.Join(in.Cgroup, "cgroup.procs")); err == nil {
		for _, f := range strings.Fields(string(b)) {
			if n, _ := strconv.Atoi(f); n > 0 {
				_ = syscall.Kill(n, syscall.SIGKILL)
			}
		}
	}
	_ = in.cmd.Process.Kill()
	_ = in.cmd.Wait()
	// Let the killed processes leave the cgroup (they are reaped by init, not us).
	for range 200 {
		if b, _ := os.ReadFile(filepath.Join(in.Cgroup, "cgroup.procs")); len(strings.TrimSpace(string(b))) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func removeCgroup(dir string) {
	for range 100 {
		if err := os.Remove(dir); err == nil || os.IsNotExist(err) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Workloads for Start: one that spins on a CPU, one that sleeps.
const (
	Spin  = "while :; do :; done"
	Sleep = "exec sleep 1000"
)

// Start runs `sh -c script` as it is (no cgroup of its own, not held) and returns its pid;
// it is killed when the test ends.
func Start(t testing.TB, script string) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

// Asleep starts sleep and returns its pid once it is asleep: a process that is whole and
// blocked, as a runtime holds a container's init when a front end places it (runc's waits
// on its exec fifo), so the placement a benchmark times does not share the CPU with an exec
// still under way. end kills it and waits until it is reaped; the test's end does, if
// nothing did before.
func Asleep(t testing.TB) (pid int, end func()) {
	t.Helper()
	cmd := exec.Command("sleep", "3600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := make(chan struct{})
	go func() { _ = cmd.Wait(); close(reaped) }()
	end = func() { _ = cmd.Process.Kill(); <-reaped }
	t.Cleanup(end)
	pid = cmd.Process.Pid
	stat := filepath.Join("/proc", strconv.Itoa(pid), "stat")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Microsecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			t.Fatal(err)
		}
		// "<pid> (sleep) S ...": exec'd, and blocked.
		if _, rest, ok := strings.Cut(string(b), " (sleep) "); ok && strings.HasPrefix(rest, "S ") {
			return pid, end
		}
	}
	t.Fatalf("sleep (pid %d) did not fall asleep in 10s", pid)
	return 0, nil
}
