// Command noopwrapper is the floor for the runtime wrapper's benchmark: a Go binary that
// does nothing but exec the real runtime (named by E2E_REAL_RUNTIME) with its arguments,
// which is what any exec'd wrapper costs before it does anything. With E2E_JOIN_TASKS set
// to a group's tasks file it first writes its own thread there, as the wrapper does for an
// exec, and nothing else: the floor for a wrapper that must join a group, which tells the
// join's cost (the kernel's, or the simulator's) from the wrapper's own work.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

func main() {
	// The thread that writes itself into the group is the one that calls execve.
	runtime.LockOSThread()
	if tasks := os.Getenv("E2E_JOIN_TASKS"); tasks != "" {
		if err := os.WriteFile(tasks, []byte(strconv.Itoa(syscall.Gettid())), 0); err != nil {
			fmt.Fprintf(os.Stderr, "noopwrapper: join %s: %v\n", tasks, err)
			os.Exit(1)
		}
	}
	rt := os.Getenv("E2E_REAL_RUNTIME")
	err := syscall.Exec(rt, append([]string{rt}, os.Args[1:]...), os.Environ())
	fmt.Fprintf(os.Stderr, "noopwrapper: exec %q: %v\n", rt, err)
	os.Exit(127)
}
