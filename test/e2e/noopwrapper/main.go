// Command noopwrapper is the floor for the runtime wrapper's benchmark: a Go binary that
// does nothing but exec the real runtime (named by E2E_REAL_RUNTIME) with its arguments,
// which is what any exec'd wrapper costs before it does anything.
package main

import (
	"fmt"
	"os"
	"syscall"
)

func main() {
	rt := os.Getenv("E2E_REAL_RUNTIME")
	err := syscall.Exec(rt, append([]string{rt}, os.Args[1:]...), os.Environ())
	fmt.Fprintf(os.Stderr, "noopwrapper: exec %q: %v\n", rt, err)
	os.Exit(127)
}
