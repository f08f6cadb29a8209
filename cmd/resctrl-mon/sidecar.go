package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/harden"
	"github.com/resctrl-mon/resctrl-mon/lib/sidecar"
)

// sidecarCommand is `resctrl-mon sidecar`, the drop-in for the PSI sidecar: same PORT,
// same flag-file discovery; everything it does is in lib/sidecar.
func sidecarCommand() *cli.Command {
	return &cli.Command{
		Name:  "sidecar",
		Usage: "export one container's cgroup v2 pressure (PSI) to Prometheus, from a sidecar in its pod",
		Description: "Serves /metrics, /healthz (200 once the container is found and its pressure readable, " +
			"else 503 and why) and /health (always 200). The container is the one given by --pid or " +
			"--container-name, else the process whose --flag-path (inside its root) holds what --flag-file holds.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "port", EnvVars: []string{"PORT"}, Value: fmt.Sprint(sidecar.DefaultPort), Usage: "TCP port to serve on (0: any free one, logged)"},
			&cli.StringFlag{Name: "address", Usage: "address to listen on (default: every interface)"},
			&cli.IntFlag{Name: "pid", Usage: "watch the container of this process (a pid in the sidecar's process namespace)"},
			&cli.StringFlag{Name: "container-name", Usage: "watch the pod's container of this Kubernetes name"},
			&cli.StringFlag{Name: "flag-path", Value: sidecar.DefaultFlagPath, Usage: "the container's flag file, inside its root"},
			&cli.StringFlag{Name: "flag-file", Value: sidecar.DefaultFlagFile, Usage: "the sidecar's copy of the flag"},
			&cli.StringFlag{Name: "container-label", Usage: "value of the container label (default: the container name, else the flag)"},
			&cli.BoolFlag{Name: "compat-seed-metrics", Usage: "also export the replaced sidecar's cgroup_monitor_sc_monitored_*_psi gauges"},
			&cli.BoolFlag{Name: "averages", Usage: "also export the kernel's 10/60/300 s averages (resctrl_mon_pressure_*_ratio)"},
			&cli.DurationFlag{Name: "min-backoff", Value: sidecar.DefaultMinBackoff, Usage: "first wait before looking for a missing container again"},
			&cli.DurationFlag{Name: "max-backoff", Value: sidecar.DefaultMaxBackoff, Usage: "longest wait between two looks"},
			&cli.StringFlag{Name: "proc", Value: "/proc", Usage: "where procfs is mounted"},
		},
		Action: runSidecar,
	}
}

func runSidecar(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return fmt.Errorf("sidecar: unexpected argument %q", c.Args().First())
	}
	harden.NonDumpable(c.App.ErrWriter) // long-running: see lib/harden
	port, err := sidecar.ParsePort(c.String("port"))
	if err != nil {
		return fmt.Errorf("sidecar: --port or PORT: %w", err)
	}
	cfg := sidecar.Config{
		Address:           c.String("address"),
		Port:              port,
		Proc:              c.String("proc"),
		PID:               c.Int("pid"),
		ContainerName:     c.String("container-name"),
		FlagPath:          c.String("flag-path"),
		FlagFile:          c.String("flag-file"),
		Label:             c.String("container-label"),
		CompatSeedMetrics: c.Bool("compat-seed-metrics"),
		Averages:          c.Bool("averages"),
		MinBackoff:        c.Duration("min-backoff"),
		MaxBackoff:        c.Duration("max-backoff"),
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := slog.New(slog.NewTextHandler(c.App.ErrWriter, nil)).With("prog", "resctrl-mon sidecar")
	if err := sidecar.Run(ctx, cfg, log); err != nil {
		return fmt.Errorf("sidecar: %w", err)
	}
	return nil
}
