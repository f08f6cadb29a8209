package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/kubeapi"
)

// The two halves of the chart's cleanup at `helm uninstall` besides `host uninstall`: its
// DaemonSet's pod idles once its init container has cleaned the node (the image has no shell
// and no sleep), and a Job waits until every node's pod is there, since Helm waits for hook
// Jobs and not for DaemonSets.

func pauseCommand() *cli.Command {
	return &cli.Command{
		Name:  "pause",
		Usage: "block until SIGTERM or SIGINT, then exit 0 (the chart's cleanup pod, once its node is cleaned)",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("host pause takes no arguments, got %q", c.Args().Slice())
			}
			ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			<-ctx.Done()
			return nil
		},
	}
}

func waitCleanupCommand() *cli.Command {
	return &cli.Command{
		Name:  "wait-cleanup",
		Usage: "wait until the cleanup DaemonSet's pod is Ready on every node it runs on; fail at once, naming the node and what its pod said, when one's cleanup failed (the chart's uninstall Job)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "daemonset", Required: true, Usage: "`NAMESPACE/NAME` of the cleanup DaemonSet"},
			&cli.DurationFlag{Name: "timeout", Value: 4 * time.Minute, Usage: "give up after this `long`, naming what is still missing (below helm's --timeout, 5m by default)"},
			&cli.DurationFlag{Name: "every", Value: 2 * time.Second, Usage: "ask the API server this `often`"},
			apiFlag(),
			saFlag(),
		},
		Action: waitCleanup,
	}
}

func waitCleanup(c *cli.Context) error {
	if c.NArg() > 0 {
		return fmt.Errorf("host wait-cleanup takes no arguments, got %q", c.Args().Slice())
	}
	ds := c.String("daemonset")
	ns, name, ok := strings.Cut(ds, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("--daemonset %q: want NAMESPACE/NAME", ds)
	}
	if c.Duration("timeout") <= 0 || c.Duration("every") <= 0 {
		return errors.New("--timeout and --every: want positive durations")
	}
	client, err := kubeapi.InCluster(c.String(apiServerFlag), c.String(serviceAccountFlag), os.Getenv)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	err = client.WaitRollout(ctx, ns, name, c.Duration("every"), func(s string) {
		fmt.Fprintf(c.App.Writer, "%s waiting: %s\n", time.Now().UTC().Format(time.RFC3339), s)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "every node's cleanup (%s) is done\n", ds)
	return nil
}
