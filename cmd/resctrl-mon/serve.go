package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/cliconfig"
	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/lib/psi"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "export every pod's resctrl counters and pressure to Prometheus (/metrics, /healthz)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Value: exporter.DefaultListen, Usage: "`host:port` to listen on"},
			&cli.StringFlag{Name: "web.config.file", Usage: "exporter-toolkit web configuration `FILE` (TLS, basic auth); none serves plain HTTP"},
			&cli.BoolFlag{Name: "pressure-averages", Usage: "also export the kernel's 10/60/300 s pressure averages"},
		},
		Action: serve,
	}
}

func serve(c *cli.Context) error {
	if c.NArg() > 0 {
		return fmt.Errorf("serve takes no arguments, got %q", c.Args().Slice())
	}
	cfg, err := cliconfig.Load(c)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(c.App.ErrWriter, nil))
	o := exporter.ServeOptions{Listen: c.String("listen"), WebConfigFile: c.String("web.config.file"), Log: log,
		Ready: func(a net.Addr) { log.Info("serving /metrics and /healthz", "address", a.String()) }}
	l, err := exporter.Listen(o)
	if err != nil {
		return err
	}
	defer l.Close()
	// Opened at the first scrape that can: at boot resctrl may not be mounted yet, nor the
	// state dir made by a first hook; /healthz says so meanwhile.
	src := exporter.NewLazy(cfg)
	if _, err := src.Open(); err != nil {
		log.Warn("no inventory yet; serving health only until there is", "err", err)
	}
	col, err := exporter.New(src, exporter.Options{SnapshotDir: cfg.SnapshotDir, PSI: &psi.Host{}, PSIAverages: c.Bool("pressure-averages"), Log: log})
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(col, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	o.Healthy = func() error {
		if _, err := src.Open(); err != nil {
			return err
		}
		return errors.Join(resctrlfs.Check(cfg.ResctrlRoot), dirExists(cfg.StateDir))
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return exporter.Serve(ctx, l, reg, o)
}

func dirExists(dir string) error {
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	return nil
}
