package main

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/lib/harden"
	"github.com/resctrl-mon/resctrl-mon/lib/kubeapi"
	"github.com/resctrl-mon/resctrl-mon/lib/podevents"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// nodeNameFlag names the node serve's Events come from.
const nodeNameFlag = "node-name"

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "export every pod's resctrl counters and pressure to Prometheus (/metrics, /healthz)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Value: exporter.DefaultListen, Usage: "`host:port` to listen on"},
			&cli.StringFlag{Name: "web.config.file", Usage: "exporter-toolkit web configuration `FILE` (TLS, basic auth); none serves plain HTTP"},
			&cli.BoolFlag{Name: "pressure-averages", Usage: "also export the kernel's 10/60/300 s pressure averages"},
			&cli.StringFlag{Name: nodeNameFlag, Usage: "with the config's events.enabled: the `node` the Events on pods come from (their source host)"},
			apiFlag(),
			saFlag(),
		},
		Action: serve,
	}
}

func serve(c *cli.Context) error {
	if c.NArg() > 0 {
		return fmt.Errorf("serve takes no arguments, got %q", c.Args().Slice())
	}
	harden.NonDumpable(c.App.ErrWriter) // long-running: see lib/harden
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(c.App.ErrWriter, nil))
	var collectors []prometheus.Collector
	var notifier *podevents.Notifier
	if cfg.Events.Enabled {
		// Best effort, as the Events are: without a token the exporter still serves.
		client, err := kubeapi.InCluster(c.String(apiServerFlag), c.String(serviceAccountFlag), os.Getenv)
		if err != nil {
			log.Warn("events.enabled, but no Event can be posted", "err", err)
		} else {
			notifier = podevents.New(cfg, c.String(nodeNameFlag), client, log)
			collectors = append(collectors, notifier.Collector())
		}
	}
	n, err := exporter.NewNode(cfg, exporter.NodeOptions{
		ServeOptions: exporter.ServeOptions{Listen: c.String("listen"), WebConfigFile: c.String("web.config.file"), Log: log,
			Ready: func(a net.Addr) { log.Info("serving /metrics and /healthz", "address", a.String()) }},
		PressureAverages: c.Bool("pressure-averages"),
		Collectors:       collectors,
		Mount:            resctrlfs.MountFor(cfg.ResctrlSimulator),
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if notifier != nil {
		go notifier.Run(ctx, podevents.PollEvery)
	}
	return n.Serve(ctx)
}
