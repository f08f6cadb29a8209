package proctest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// HoldFlock makes another process (util-linux flock) hold path's flock until the test ends,
// the way a hook stuck in resctrl holds a pod's lock, and returns once it does.
func HoldFlock(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("flock", path, "sleep", "600")
	// sleep inherits the locked descriptor: killing flock alone would leave the lock held
	// for ten minutes, so the whole process group goes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skipf("flock(1): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	fd, err := unix.Open(path, unix.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Close(fd) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); errors.Is(err, unix.EWOULDBLOCK) {
			return
		}
		_ = unix.Flock(fd, unix.LOCK_UN)
		if time.Now().After(deadline) {
			t.Fatal("flock(1) never took the lock")
		}
	}
}

// ThreadsInSyscall counts this process's OS threads blocked in system call nr (from
// /proc/self/task/*/syscall), such as unix.SYS_FLOCK: what a stuck waiter costs. The whole
// thread count is no measure of that: the Go runtime keeps every thread it ever started, and
// on a loaded machine it starts one for any slow system call of many concurrent goroutines.
func ThreadsInSyscall(t *testing.T, nr int) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "syscall"))
		if err != nil {
			continue // the thread exited while we looked
		}
		// "running", or the number and arguments of the system call the thread is blocked in.
		if f := strings.Fields(string(b)); len(f) > 0 && f[0] == strconv.Itoa(nr) {
			n++
		}
	}
	return n
}

// Threads is this process's OS thread count.
func Threads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads: line in /proc/self/status")
	return 0
}
