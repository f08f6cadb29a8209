// Command resctrlsim mounts the resctrl simulator and talks to a mounted one.
//
//	resctrlsim mount [flags] DIR     serve until SIGINT/SIGTERM or umount, then clean up
//	resctrlsim ctl --socket S CMD... send a fault-injection or status command
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

func main() {
	app := &cli.App{
		Name:     "resctrlsim",
		Usage:    "a FUSE filesystem with the semantics of Linux resctrl monitoring",
		Commands: []*cli.Command{mountCommand(), ctlCommand()},
	}
	if err := app.Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "resctrlsim:", err)
		os.Exit(1)
	}
}

func mountCommand() *cli.Command {
	return &cli.Command{
		Name:      "mount",
		Usage:     "mount a simulator on DIR and serve it until interrupted or unmounted",
		ArgsUsage: "DIR",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "rmids", Value: 64, Usage: "info/L3_MON/num_rmids"},
			&cli.IntFlag{Name: "closids", Value: 16, Usage: "info/L3/num_closids"},
			&cli.IntFlag{Name: "l3-domains", Value: 1, Usage: "number of mon_L3_NN domains"},
			&cli.BoolFlag{Name: "mpam-fixed", Usage: "Arm MPAM's fixed counter assignment: mbm_event mode (implied) that cannot be switched; mbm_assign_mode lists only [mbm_event] and refuses default"},
			&cli.BoolFlag{Name: "io-alloc", Usage: "AMD's io_alloc: info/L3/io_alloc, which when enabled reserves the highest CLOSID"},
			&cli.IntFlag{Name: "snc", Usage: "Sub-NUMA Cluster nodes per L3 cache (2, 3, 4 or 6): per-node mon_sub_L3_YY directories, --rmids divided among them; 0: no SNC"},
			&cli.IntFlag{Name: "perf-pkg-domains", Usage: "number of mon_PERF_PKG_NN (Intel AET) domains; 0: no AET"},
			&cli.StringSliceFlag{Name: "aet-group", Usage: "an Intel AET event group as boot left it, NAME[:RMIDS[:force]] (energy, perf; RMIDS: its regions' num_rmids, under 576 it is off unless force, as rdt=NAME); repeat for both; none: energy alone"},
			&cli.IntFlag{Name: "perf-pkg-rmids", Usage: "info/PERF_PKG_MON/num_rmids (default: --rmids)"},
			&cli.DurationFlag{Name: "limbo", Usage: "keep a freed RMID dirty at least this long, whatever its occupancy (mkdir says EBUSY meanwhile); turns --limbo-occupancy on"},
			&cli.BoolFlag{Name: "limbo-occupancy", Usage: "the kernel's RMID limbo: a freed RMID is dirty until the limbo worker reads its llc_occupancy below info/L3_MON/max_threshold_occupancy"},
			&cli.DurationFlag{Name: "limbo-interval", Usage: "how often the limbo worker runs (default 1s, as the kernel's)"},
			&cli.BoolFlag{Name: "task-lists", Usage: "accept comma-separated ids in one tasks write (Linux ≥ 6.2)"},
			&cli.StringFlag{Name: "mbm-assign", Usage: "counter assignment of Linux ≥ 6.18: mbm_event or default (ABMC hardware mounted in that mode), default-only (no ABMC); empty: an older kernel"},
			&cli.IntFlag{Name: "mbm-counters", Usage: "info/L3_MON/num_mbm_cntrs per domain with --mbm-assign mbm_event|default (default 32)"},
			&cli.BoolFlag{Name: "debug", Usage: "add mon_hw_id/ctrl_hw_id files, as mount -o debug does"},
			&cli.StringFlag{Name: "ctl-socket", Usage: "serve fault-injection commands on this unix socket"},
			&cli.BoolFlag{Name: "mkdir", Usage: "create DIR if it does not exist"},
		},
		Before: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("mount: want exactly one DIR, got %d arguments", c.NArg())
			}
			return nil
		},
		Action: runMount,
	}
}

func runMount(c *cli.Context) error {
	dir := c.Args().First()
	// Catch signals before mounting: a SIGTERM that arrived between the mount and
	// signal.Notify would kill the process and leave a dead mount behind.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	if c.Bool("mkdir") {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("mount: %w", err)
		}
	}
	var aet []resctrlsim.AETGroup
	for _, s := range c.StringSlice("aet-group") {
		g, err := resctrlsim.ParseAETGroup(s)
		if err != nil {
			return fmt.Errorf("mount: %w", err)
		}
		aet = append(aet, g)
	}
	sim, err := resctrlsim.Mount(dir, resctrlsim.Options{
		NumRMIDs:       c.Int("rmids"),
		NumCLOSIDs:     c.Int("closids"),
		L3Domains:      c.Int("l3-domains"),
		SNCWays:        c.Int("snc"),
		IOAlloc:        c.Bool("io-alloc"),
		MPAMFixed:      c.Bool("mpam-fixed"),
		PerfPkgDomains: c.Int("perf-pkg-domains"),
		PerfPkgRMIDs:   c.Int("perf-pkg-rmids"),
		AETGroups:      aet,
		Limbo:          c.Bool("limbo-occupancy"),
		LimboTime:      c.Duration("limbo"),
		LimboInterval:  c.Duration("limbo-interval"),
		TaskLists:      c.Bool("task-lists"),
		MBMAssign:      resctrlsim.MBMAssign(c.String("mbm-assign")),
		MBMCounters:    c.Int("mbm-counters"),
		Debug:          c.Bool("debug"),
		Logf: func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, format+"\n", args...)
		},
	})
	if err != nil {
		return err
	}
	if path := c.String("ctl-socket"); path != "" {
		stop, err := sim.ServeControl(path)
		if err != nil {
			return errors.Join(err, sim.Unmount())
		}
		defer func() { _ = stop() }()
	}
	fmt.Fprintf(os.Stderr, "resctrlsim: mounted on %s\n", dir)
	unmounted := make(chan struct{})
	go func() { sim.Wait(); close(unmounted) }()
	select {
	case s := <-sigs:
		fmt.Fprintf(os.Stderr, "resctrlsim: %s: unmounting %s\n", s, dir)
	case <-unmounted:
	}
	return sim.Unmount()
}

func ctlCommand() *cli.Command {
	return &cli.Command{
		Name:      "ctl",
		Usage:     "send one command to a mounted simulator's control socket",
		ArgsUsage: "fail OP COUNT ERRNO | latency OP DURATION | counter NAME STATE [GROUP] | reset | clear | status",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "socket", Required: true, Usage: "the --ctl-socket of the mount"},
		},
		Action: func(c *cli.Context) error {
			out, err := resctrlsim.Control(c.String("socket"), strings.Join(c.Args().Slice(), " "))
			if err != nil {
				return fmt.Errorf("ctl: %w", err)
			}
			fmt.Println(out)
			return nil
		},
	}
}
