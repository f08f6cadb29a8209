package main

import (
	"fmt"
	"log/slog"
	"net"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/cliconfig"
	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/lib/harden"
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
	harden.NonDumpable(c.App.ErrWriter) // long-running: see lib/harden
	cfg, err := cliconfig.Load(c)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(c.App.ErrWriter, nil))
	n, err := exporter.NewNode(cfg, exporter.NodeOptions{
		ServeOptions: exporter.ServeOptions{Listen: c.String("listen"), WebConfigFile: c.String("web.config.file"), Log: log,
			Ready: func(a net.Addr) { log.Info("serving /metrics and /healthz", "address", a.String()) }},
		PressureAverages: c.Bool("pressure-averages"),
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return n.Serve(ctx)
}
