package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/hooksd"
	"github.com/resctrl-mon/resctrl-mon/lib/hostinstall"
	"github.com/resctrl-mon/resctrl-mon/lib/kubeapi"
)

// hostCommand puts the OCI hook on the host (hooks mode: CRI-O and podman through hooks.d)
// and takes it off: the Helm chart's init container and its uninstall hook run it from the
// image, `make install` from bin/. A subcommand, not a script: the image has no shell.
func hostCommand() *cli.Command {
	where := []cli.Flag{
		&cli.StringFlag{Name: "host-root", Value: "/", Usage: "where the host's root is mounted (\"/\" on the host; e.g. /host in a pod); every other path is the host's"},
		&cli.StringFlag{Name: "hook-path", Value: hostinstall.DefaultHookPath, Usage: "host `path` of the hook binary"},
		&cli.StringFlag{Name: "hooks-dir", Value: hostinstall.DefaultHooksDir, Usage: "host `dir` the runtime reads hooks.d registrations from (CRI-O's hooks_dir, podman's --hooks-dir)"},
		&cli.StringFlag{Name: "config-path", Value: hostinstall.DefaultConfigPath, Usage: "host `path` of the hook's config (the hook is given --config when its build looks elsewhere)"},
		&cli.StringFlag{Name: "manifest", Usage: "host `path` of the record of what install wrote (default " + hostinstall.ManifestName + " beside --config-path)"},
	}
	return &cli.Command{
		Name:  "host",
		Usage: "install the OCI hook, its config and its hooks.d registrations on the host, or remove them",
		Subcommands: []*cli.Command{{
			Name:  "install",
			Usage: "copy the hook, write the config (with --config) and the createRuntime/poststop hooks.d JSON; binary first, JSON last; idempotent",
			Description: "Every file is written whole (temp file and rename) and recorded in the manifest before it is written.\n" +
				"A file at a destination that no manifest records is refused (--adopt takes it over).",
			Flags: append(where,
				&cli.StringFlag{Name: "hook-source", Usage: "the hook binary to copy (default resctrl-mon-hook beside this program)"},
				&cli.StringFlag{Name: "config", Usage: "config `file` (here, not on the host) to write at --config-path; none: the config is left alone"},
				&cli.StringFlag{Name: "timeout", Value: fmt.Sprint(hostinstall.DefaultTimeout), Usage: "the runtime's hook timeout in whole `seconds`; the hook's --hookBudget is 2 s less"},
				&cli.BoolFlag{Name: "adopt", Usage: "take over files already at the destinations that no manifest records"},
				&cli.StringFlag{Name: "wrapper-path", Usage: "also install the runtime wrapper at this host `path`, for a runtime handler that places exec'd processes too; none: no wrapper"},
				&cli.StringFlag{Name: "wrapper-source", Usage: "the wrapper binary to copy (default resctrl-mon-runtime beside this program)"},
				&cli.BoolFlag{Name: "no-registrations", Usage: "write no hooks.d JSON (a node whose runtime places containers through NRI: only the wrapper's pods run the hook)"},
			),
			Action: hostInstall,
		}, {
			Name:  "uninstall",
			Usage: "remove what install recorded in the manifest (JSON first, then the binaries and config), nothing else; nothing while a runtime's config names one of them",
			Description: "The Helm chart's cleanup runs it on every node at helm uninstall (a post-delete hook), with\n" +
				"--wait-placers, --release-groups (no RMID outlives resctrl-mon) and --event-node. Every decision\n" +
				"is printed (kubectl logs); what is kept is an error (exit status 1), so the hook fails and says so.",
			Flags:  append(where, uninstallFlags()...),
			Action: hostUninstall,
		},
			pauseCommand(),
			waitCleanupCommand(),
		},
	}
}

func hostOptions(c *cli.Context) (hostinstall.Options, error) {
	if c.NArg() > 0 {
		return hostinstall.Options{}, fmt.Errorf("host %s takes no arguments, got %q", c.Command.Name, c.Args().Slice())
	}
	return hostinstall.Options{
		HostRoot:   c.String("host-root"),
		HookPath:   c.String("hook-path"),
		HooksDir:   c.String("hooks-dir"),
		ConfigPath: c.String("config-path"),
		Manifest:   c.String("manifest"),
	}, nil
}

func hostInstall(c *cli.Context) error {
	o, err := hostOptions(c)
	if err != nil {
		return err
	}
	if o.Timeout, err = hooksd.ParseTimeout(c.String("timeout")); err != nil {
		return fmt.Errorf("--%w", err)
	}
	o.ConfigSource, o.Adopt = c.String("config"), c.Bool("adopt")
	o.WrapperPath, o.WrapperSource, o.NoRegistrations = c.String("wrapper-path"), c.String("wrapper-source"), c.Bool("no-registrations")
	if o.WrapperPath != "" && o.WrapperSource == "" {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("--wrapper-source not given, and this program's own path is unknown: %w", err)
		}
		o.WrapperSource = filepath.Join(filepath.Dir(self), "resctrl-mon-runtime")
	}
	if o.HookSource = c.String("hook-source"); o.HookSource == "" {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("--hook-source not given, and this program's own path is unknown: %w", err)
		}
		o.HookSource = filepath.Join(filepath.Dir(self), "resctrl-mon-hook")
	}
	res, err := hostinstall.Install(o)
	printResult(c, res)
	return err
}

func hostUninstall(c *cli.Context) error {
	o, err := hostOptions(c)
	if err != nil {
		return err
	}
	for _, p := range c.StringSlice(runtimeConfigFlag) {
		if p != "" {
			o.RuntimeConfigs = append(o.RuntimeConfigs, p)
		}
	}
	d := newDecisions(c)
	if gone, why := leaving(c); !gone {
		// The compatible preStop's answer: a pod replaced, or no answer. Not a failure.
		d.say(kubeapi.ReasonKept, "kept everything: "+why)
		return nil
	} else if c.IsSet(unlessDaemonSetFlag) {
		fmt.Fprintf(c.App.Writer, "uninstalling: %s\n", why)
	}
	if err := waitPlacers(c); err != nil {
		err = fmt.Errorf("kept everything on this node: %w", err)
		d.say(kubeapi.ReasonKept, err.Error())
		return err
	}
	var res hostinstall.Result
	if !c.Bool(noFilesFlag) {
		res, err = hostinstall.Uninstall(o)
		printResult(c, res)
	}
	if err != nil && len(res.Removed) == 0 {
		// Refused (a runtime names the wrapper) or unknown: the files, and the groups the
		// wrapper's pods use, all stay.
		msg := err.Error()
		if errors.Is(err, hostinstall.ErrNamedByRuntime) {
			msg += "; then run resctrl-mon host uninstall on the node (docs/operations/uninstall.md, by hand on a node)"
		}
		d.say(kubeapi.ReasonKept, msg)
		return err
	}
	if err == nil && len(res.Removed) == 0 && !c.Bool(noFilesFlag) {
		fmt.Fprintf(c.App.Writer, "nothing to remove: no manifest at %s\n", o.ManifestPath())
	}
	// The hooks first, so that no container is placed into a group about to go; then once
	// more no placer, for a hook a runtime started before its registration went.
	released := 0
	if c.Bool(releaseGroupsFlag) {
		if werr := waitPlacers(c); werr != nil {
			err = errors.Join(err, werr)
		} else {
			n, rerr := releaseGroups(c)
			released, err = n, errors.Join(err, rerr)
		}
	}
	if err != nil {
		d.say(kubeapi.ReasonKept, fmt.Sprintf("removed %d files and released %d groups, and kept the rest: %v", len(res.Removed), released, err))
		return err
	}
	if c.Bool(noFilesFlag) {
		d.say(kubeapi.ReasonUninstall, fmt.Sprintf("released %d groups (no file: --no-files)", released))
		return nil
	}
	d.say(kubeapi.ReasonUninstall, fmt.Sprintf("removed %d files resctrl-mon installed (%s) and released %d groups", len(res.Removed), strings.Join(res.Removed, ", "), released))
	return nil
}

func printResult(c *cli.Context, res hostinstall.Result) {
	for _, p := range res.Written {
		fmt.Fprintln(c.App.Writer, "installed", p)
	}
	for _, p := range res.Removed {
		fmt.Fprintln(c.App.Writer, "removed", p)
	}
}
