// Command forker is a container workload for the end-to-end tests: the moment it starts it
// forks children (one of which forks a grandchild) and creates threads, the work a late
// placement would miss. It prints "ready" when all of them exist and then waits forever.
// It is built static (CGO_ENABLED=0) and copied into the test rootfs.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

func main() {
	for range 3 {
		spawn("sleep", "600")
	}
	spawn("sh", "-c", "sleep 600 & wait")
	started := make(chan struct{})
	for range 4 {
		go func() {
			// A goroutine locked to its thread keeps it: four more OS threads.
			runtime.LockOSThread()
			started <- struct{}{}
			select {}
		}()
	}
	for range 4 {
		<-started
	}
	fmt.Println("ready")
	// Sleep rather than block forever: with every goroutine blocked the runtime would call
	// it a deadlock and exit.
	for {
		time.Sleep(time.Hour)
	}
}

func spawn(name string, args ...string) {
	c := exec.Command(name, args...)
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "forker:", err)
		os.Exit(1)
	}
}
