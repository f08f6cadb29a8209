// Command resctrl-mon-hook is the OCI hook: run as `resctrl-mon-hook createRuntime` and
// `resctrl-mon-hook poststop` by runc, crun, podman or CRI-O (hooks.d), with the container
// state on stdin. It places every task of a container in its pod's resctrl monitoring group
// before the container's first instruction, and releases the group when the pod is gone.
//
// The runtime waits for this process before the container may run, so its start-up is on
// every container's critical path. That is why its two arguments are parsed with the standard
// library's flag package: urfave/cli (which the resctrl-mon CLI uses, with the same flags)
// costs this process 1.5–2 ms per call, where the whole hook may add about 4.5 ms to a no-op
// one (the README's benchmarks).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/hook"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stderr))
}

// run parses `[flags] createRuntime|poststop` and runs the hook. Usage errors exit 2, which
// a runtime reports as a failed hook: a hook installed with wrong arguments is an install
// error that must be seen, whatever the failure policy.
func run(args []string, stdin io.Reader, stderr io.Writer) int {
	fs := flag.NewFlagSet("resctrl-mon-hook", flag.ContinueOnError)
	// Nothing on stdout: runtimes may treat hook output as theirs.
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: resctrl-mon-hook [flags] %s|%s  (the container's state on stdin)\n", hook.CreateRuntime, hook.Poststop)
		fs.PrintDefaults()
	}
	cfgPath := fs.String("config", "", config.ConfigFlagUsage)
	keys := config.Keys()
	sort.Strings(keys)
	for _, k := range keys {
		fs.String(k, "", config.FlagUsage(k))
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 || (fs.Arg(0) != hook.CreateRuntime && fs.Arg(0) != hook.Poststop) {
		fmt.Fprintf(stderr, "resctrl-mon-hook: want one stage, %s or %s, after the flags; got %q\n", hook.CreateRuntime, hook.Poststop, fs.Args())
		fs.Usage()
		return 2
	}
	set := map[string]string{}
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "config" {
			set[f.Name] = f.Value.String()
		}
	})
	cfg, err := config.Resolve(*cfgPath, os.Environ(), set)
	return hook.Run(fs.Arg(0), stdin, stderr, cfg, err)
}
