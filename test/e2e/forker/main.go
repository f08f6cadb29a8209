// Command forker is a container workload for the end-to-end tests: the moment it starts it
// forks children (one of which forks a grandchild) and creates threads, the work a late
// placement would miss. It prints "ready" when all of them exist and then waits forever.
// The tests count on at least 12 tasks at "ready": 5 processes (3 sleeps, sh and its sleep)
// and 7 threads (the main goroutine's, sysmon's and 5 locked ones), so "ready" waits for the
// grandchild too, and no count rests on threads the Go runtime starts when it likes.
// It is built static (CGO_ENABLED=0) and copied into the test rootfs.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

func main() {
	for range 3 {
		spawn("sleep", "600")
	}
	sh := spawn("sh", "-c", "sleep 600 & wait")
	started := make(chan struct{})
	for range 5 {
		go func() {
			// A goroutine locked to its thread keeps it: five more OS threads.
			runtime.LockOSThread()
			started <- struct{}{}
			select {}
		}()
	}
	for range 5 {
		<-started
	}
	waitChild(sh.Process.Pid)
	fmt.Println("ready")
	// Sleep rather than block forever: with every goroutine blocked the runtime would call
	// it a deadlock and exit.
	for {
		time.Sleep(time.Hour)
	}
}

func spawn(name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "forker:", err)
		os.Exit(1)
	}
	return c
}

// waitChild returns once process pid has a child: sh forks its sleep when the scheduler lets
// it, which under load can be after everything else here is done.
func waitChild(pid int) {
	children := fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if b, err := os.ReadFile(children); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return
		}
	}
	fmt.Fprintln(os.Stderr, "forker: sh forked no child in a minute")
	os.Exit(1)
}
