// Command resctrl-mon-runtime is the runtime wrapper: installed in runc's or crun's place, it
// lists resctrl-mon's hooks in the bundle of every container it creates and puts every
// process it execs into the container's pod group, then execs the real runtime (config key
// runtime) with its command line untouched. See lib/wrapper and docs/install/wrapper.md.
//
// It is on the path of every runtime call (state, kill, delete: containerd and CRI-O call
// the runtime often), so it takes no flags of its own (they are all the runtime's: the
// config file comes from RESCTRL_MON_CONFIG or the built-in default path), parses only what
// it needs of the command line, with no CLI framework, and reads the config once.
package main

import (
	"fmt"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/wrapper"
)

// The main goroutine stays on the process's first thread, the one that calls execve: for
// exec, that thread is what is written into the pod's group, and a thread's resctrl group
// is what the exec'd runtime and everything it forks inherit.
func init() { runtime.LockOSThread() }

func main() {
	wrapper.JoinIfAsked() // the exec's joiner: this binary, started by an exec below
	x, err := wrapper.Prepare(os.Args, os.Environ(), unix.Gettid(), os.Stderr)
	if err != nil {
		os.Exit(1) // Prepare said why on stderr
	}
	err = syscall.Exec(x.Path, x.Argv, os.Environ())
	fmt.Fprintf(os.Stderr, "%s: exec %s: %v\n", wrapper.Prog, x.Path, err)
	os.Exit(127)
}
