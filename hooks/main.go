// Command resctrl-mon-hook is the OCI hook: run as `resctrl-mon-hook createRuntime` and
// `resctrl-mon-hook poststop` by runc, crun, podman or CRI-O (hooks.d), with the container
// state on stdin. It places every task of a container in its pod's resctrl monitoring group
// before the container's first instruction, and releases the group when the pod is gone.
package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/cliconfig"
	"github.com/resctrl-mon/resctrl-mon/lib/hook"
)

func main() {
	code := 0
	stage := func(name string) *cli.Command {
		return &cli.Command{
			Name:  name,
			Usage: "handle the OCI " + name + " hook (state JSON on stdin)",
			Action: func(c *cli.Context) error {
				cfg, err := cliconfig.Load(c)
				code = hook.Run(name, os.Stdin, os.Stderr, cfg, err)
				return nil
			},
		}
	}
	app := &cli.App{
		Name:     "resctrl-mon-hook",
		Usage:    "OCI hook placing containers in their pod's resctrl monitoring group",
		Flags:    cliconfig.Flags(),
		Commands: []*cli.Command{stage(hook.CreateRuntime), stage(hook.Poststop)},
		// Nothing on stdout: runtimes may treat hook output as theirs.
		Writer: os.Stderr,
	}
	if err := app.Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "resctrl-mon-hook:", err)
		os.Exit(2)
	}
	os.Exit(code)
}
