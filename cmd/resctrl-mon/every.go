package main

import (
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/harden"
)

// everyFlag turns a one-shot command into a loop: the DaemonSet's reconcile container runs
// `reconcile --every 1m` where a host would run a systemd timer.
var everyFlag = &cli.DurationFlag{
	Name:  "every",
	Usage: "run again every `DURATION` until SIGTERM or SIGINT (a failed round is reported, and the next one runs); 0: once",
}

// repeat runs action once, or with --every each period until a signal: the first round at
// once, so that what was missed while nothing ran is repaired when the loop starts.
func repeat(action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		every := c.Duration(everyFlag.Name)
		if every == 0 {
			return action(c)
		}
		if every < time.Second {
			return fmt.Errorf("--every %s: want at least 1s (or 0 for once)", every)
		}
		harden.NonDumpable(c.App.ErrWriter) // long-running from here: see lib/harden
		ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
		defer stop()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if err := action(c); err != nil {
				fmt.Fprintf(c.App.ErrWriter, "resctrl-mon: %s: %v (next round in %s)\n", c.Command.Name, err, every)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
		}
	}
}
