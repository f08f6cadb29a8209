package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/top"
)

func topCommand() *cli.Command {
	return &cli.Command{
		Name:      "top",
		Usage:     "a live per-pod view: memory bandwidth, LLC occupancy, energy rate, pressure",
		UsageText: "resctrl-mon top [--sort bw|llc|energy|cpu|mem|io|name] [--interval 2s] [--once | -n N]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "sort", Value: string(top.SortBW), Usage: "column to sort by, largest first: bw, llc, energy, cpu, mem, io, or name"},
			&cli.DurationFlag{Name: "interval", Value: top.DefaultInterval, Usage: "time between frames (the first frame comes one interval after the start)"},
			&cli.IntFlag{Name: "n", Usage: "show `N` frames and exit (0: until interrupted)"},
			&cli.BoolFlag{Name: "once", Usage: "show one frame and exit (-n 1)"},
		},
		Action: runTop,
	}
}

func runTop(c *cli.Context) error {
	if c.NArg() > 0 {
		return fmt.Errorf("top takes no arguments, got %q", c.Args().Slice())
	}
	key, err := top.ParseSortKey(c.String("sort"))
	if err != nil {
		return err
	}
	if c.Duration("interval") <= 0 {
		return fmt.Errorf("--interval %s: want a positive duration", c.Duration("interval"))
	}
	frames := c.Int("n")
	if frames < 0 {
		return fmt.Errorf("-n %d: want 0 (until interrupted) or more", frames)
	}
	if c.Bool("once") {
		if c.IsSet("n") && frames != 1 {
			return fmt.Errorf("--once and -n %d: give one of them", frames)
		}
		frames = 1
	}
	inv, err := openInventory(c)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return top.Run(ctx, c.App.Writer, top.NewSampler(inv, &cgroup.Host{}),
		top.Options{Interval: c.Duration("interval"), Frames: frames, Sort: key, ANSI: isTerminal(c.App.Writer)})
}

// isTerminal: clear-and-redraw only on a terminal; a pipe or a file gets plain frames.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
