// Command resctrl-mon-hook is the OCI hook: run as `resctrl-mon-hook createRuntime` and
// `resctrl-mon-hook poststop` by runc, crun, podman or CRI-O (hooks.d), with the container
// state on stdin. It places every task of a container in its pod's resctrl monitoring group
// before the container's first instruction, and releases the group when the pod is gone.
//
// The runtime waits for this process before the container may run, so its start-up is on
// every container's critical path. That is why its two arguments are parsed with the standard
// library's flag package: urfave/cli (which the resctrl-mon CLI uses, with the same flags)
// would cost every call a good share of what the whole hook adds to a no-op one
// (docs/benchmarks.md).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/resctrl-mon/resctrl-mon/hooks/hook"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
)

func main() {
	// The budget counts from here: the runtime's timeout started when it forked us, the
	// Go runtime's start (well under a millisecond) before it.
	start := time.Now()
	hook.WorkIfAsked(kernel.Open)
	os.Exit(run(start, nil, os.Args[1:], os.Stdin, os.Stderr))
}

// run parses `[flags] createRuntime|poststop` and runs the hook. Usage errors exit 2, which
// a runtime reports as a failed hook: a hook installed with wrong arguments is an install
// error that must be seen, whatever the failure policy.
//
// A poststop's work runs in the hook's worker (hook.WorkerArg), started here, before the
// configuration and stdin are read, so that its start overlaps them. A createRuntime hook
// starts one only when the container is not joining a live group (hook.Run): a join needs
// none, and a worker started for nothing would take a CPU from it.
func run(start time.Time, w *hook.Worker, args []string, stdin io.Reader, stderr io.Writer) int {
	if w == nil && len(args) > 0 && args[len(args)-1] == hook.Poststop {
		w, _ = hook.StartWorker()
	}
	inv, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		w.Close()
		return 0
	}
	if err != nil {
		w.Close()
		return 2
	}
	cfg, err := config.Resolve(inv.configPath, os.Environ(), inv.set)
	return hook.Run(start, w, inv.stage, stdin, stderr, cfg, err, kernel.Open)
}

// invocation is what the command line asks for.
type invocation struct {
	stage      string
	configPath string
	set        map[string]string // config keys given as flags
}

// parseArgs reads the command line, saying what is wrong with it on stderr.
func parseArgs(args []string, stderr io.Writer) (invocation, error) {
	fs := flag.NewFlagSet("resctrl-mon-hook", flag.ContinueOnError)
	// Nothing on stdout: runtimes may treat hook output as theirs.
	fs.SetOutput(stderr)
	flags := config.BindFlags(fs)
	fs.Usage = func() {
		flags.FillUsage()
		fmt.Fprintf(stderr, "usage: resctrl-mon-hook [flags] %s|%s  (the container's state on stdin)\n", hook.CreateRuntime, hook.Poststop)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return invocation{}, err
	}
	if fs.NArg() != 1 || (fs.Arg(0) != hook.CreateRuntime && fs.Arg(0) != hook.Poststop) {
		fmt.Fprintf(stderr, "resctrl-mon-hook: want one stage, %s or %s, after the flags; got %q\n", hook.CreateRuntime, hook.Poststop, fs.Args())
		fs.Usage()
		return invocation{}, errors.New("bad usage")
	}
	inv := invocation{stage: fs.Arg(0), configPath: flags.Path(), set: flags.Given()}
	return inv, nil
}
