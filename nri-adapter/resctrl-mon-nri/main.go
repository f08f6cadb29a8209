// Command resctrl-mon-nri is resctrl-mon's NRI plugin for containerd and CRI-O: the same
// library as the OCI hook, driven by the runtime's NRI events (nri-adapter/nriplugin). Run it as an
// external plugin (it connects to the runtime's NRI socket) or pre-registered in the
// runtime's NRI plugin dir (the runtime starts it and may push its config).
//
// It exits 1 when the runtime drops the connection, for its supervisor to restart it (it
// resynchronises on start), and 2 when its configuration is bad. Started by the runtime, a
// configuration the runtime pushes can stand in for a bad or missing own one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/lib/harden"
	"github.com/resctrl-mon/resctrl-mon/lib/logging"
	"github.com/resctrl-mon/resctrl-mon/lib/permission"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/nri-adapter/nriplugin"
)

func main() {
	oneProc(os.Getenv)
	harden.NonDumpable(os.Stderr) // other root hostPID pods must not reach its NRI socket through /proc/<pid>/root
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

// oneProc runs the Go scheduler on one P unless GOMAXPROCS is set. The adapter handles one
// event at a time and spends it waiting on resctrl and the registry's files; with a P per
// core the scheduler wakes a spinning thread at every goroutine handoff and its sysmon keeps
// polling, CPU spent on no event (what one P saves: docs/benchmarks.md, the adapter beside
// its peer). A stuck resctrl write does not hold the one P: the scheduler hands it to
// another thread once the write blocks.
func oneProc(getenv func(string) string) {
	if getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// invocation is what the command line asks for.
type invocation struct {
	configPath string
	set        map[string]string // config keys given as flags
	opts       nriplugin.Options
	// export: the node's exporter in this process when a listen address is given, so a
	// containerd node runs one process of ours, not two.
	export exporter.NodeOptions
	// health: the adapter's own metrics and probes on an address of their own, beside an
	// exporter in another process (the Helm chart's).
	health     exporter.ServeOptions
	stuckAfter time.Duration
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	inv, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	cfg, err := config.Resolve(inv.configPath, os.Environ(), inv.set)
	log, closer, lerr := openLog(cfg)
	if lerr != nil {
		log, closer = slog.New(slog.NewTextHandler(stderr, nil)), io.NopCloser(nil)
		err = errors.Join(err, lerr)
	}
	defer func() { _ = closer.Close() }()
	var p *nriplugin.Plugin
	if err == nil {
		p, err = nriplugin.New(cfg, log, kernel.Open)
	}
	if err != nil {
		// A state dir or resctrl root the kernel refuses (an LSM in a container): say why.
		err = permission.Explain(err, permission.Self())
		if os.Getenv(api.PluginSocketEnvVar) == "" {
			fmt.Fprintf(stderr, "resctrl-mon-nri: not started: %v\n", err)
			return 2
		}
		// Started by the runtime (pre-registered), with no arguments and no environment:
		// the configuration it pushes at registration may be all there is.
		log.Warn("own configuration unusable; waiting for the runtime's", "err", err)
		p = nriplugin.Unconfigured(log, err, kernel.Open)
	}
	p.SetLogOpener(openLog)
	p.SetStuckAfter(inv.stuckAfter)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var exported, healthServed <-chan struct{}
	if inv.health.Listen != "" {
		// Bound before the runtime is contacted, as --listen: a bad address refuses to start.
		healthServed, err = serveHealth(ctx, p, inv.health, log)
		if err != nil {
			fmt.Fprintf(stderr, "resctrl-mon-nri: not started: --health-listen: %v\n", err)
			return 2
		}
	}
	if inv.export.Listen != "" {
		// Bound before the runtime is contacted: a bad address or web config refuses to
		// start. It reads the adapter's own configuration's resctrl root and state dir.
		if err != nil {
			fmt.Fprintf(stderr, "resctrl-mon-nri: not started: --listen needs a usable configuration of its own: %v\n", err)
			return 2
		}
		inv.export.Log = log
		inv.export.Ready = func(a net.Addr) { log.Info("serving /metrics and /healthz", "address", a.String()) }
		inv.export.Collectors = []prometheus.Collector{p.Collector()}
		inv.export.Healthy, inv.export.Readiness = p.Live, p.Ready
		inv.export.Mount = resctrlfs.MountFor(cfg.ResctrlSimulator)
		n, nerr := exporter.NewNode(cfg, inv.export)
		if nerr != nil {
			fmt.Fprintf(stderr, "resctrl-mon-nri: not started: %v\n", nerr)
			return 2
		}
		exported = serveMetrics(ctx, n, log)
	}
	code := 0
	if err := p.Run(ctx, inv.opts); err != nil {
		log.Error("stopped", "err", err)
		fmt.Fprintf(stderr, "resctrl-mon-nri: %v\n", err)
		code = 1
	}
	cancel() // the plugin ended: so do its servers
	for _, done := range []<-chan struct{}{exported, healthServed} {
		if done != nil {
			<-done
		}
	}
	return code
}

// serveHealth serves the adapter's own metrics (exporter.Registry of its Collector), its
// liveness on /healthz (Live: no event's work stuck) and its readiness on /readyz (Ready:
// connected, synchronised, keeping up). Like the exporter's, its failure is logged and
// leaves the plugin running.
func serveHealth(ctx context.Context, p *nriplugin.Plugin, o exporter.ServeOptions, log *slog.Logger) (<-chan struct{}, error) {
	reg, err := exporter.Registry(p.Collector())
	if err != nil {
		return nil, err
	}
	l, err := exporter.Listen(o)
	if err != nil {
		return nil, err
	}
	o.Healthy, o.Readiness, o.Log = p.Live, p.Ready, log
	o.Ready = func(a net.Addr) {
		log.Info("serving the adapter's /metrics, /healthz and /readyz", "address", a.String())
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = l.Close() }()
		if err := exporter.Serve(ctx, l, reg, o); err != nil {
			log.Error("health server stopped; the plugin goes on", "err", err)
		}
	}()
	return done, nil
}

// serveMetrics runs the exporter beside the plugin. Its failure is logged and leaves the
// plugin running: placing containers matters more than exporting them.
func serveMetrics(ctx context.Context, n *exporter.Node, log *slog.Logger) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := n.Serve(ctx); err != nil {
			log.Error("exporter stopped; the plugin goes on", "err", err)
		}
	}()
	return done
}

func openLog(cfg config.Config) (*slog.Logger, io.Closer, error) {
	return logging.Open(cfg.Log, "resctrl-mon-nri", filepath.Join(cfg.StateDir, "nri.log"))
}

// parseArgs reads the command line: NRI's own settings, then every config key as a flag,
// as the hook and the CLI take them.
func parseArgs(args []string, stderr io.Writer) (invocation, error) {
	fs := flag.NewFlagSet("resctrl-mon-nri", flag.ContinueOnError)
	fs.SetOutput(stderr)
	flags := config.BindFlags(fs)
	fs.Usage = func() {
		flags.FillUsage()
		fmt.Fprintln(stderr, "usage: resctrl-mon-nri [flags]  (an NRI plugin: places each container in its pod's resctrl group at the runtime's NRI events;")
		fmt.Fprintln(stderr, "       exits 1 when the runtime drops the connection, for its supervisor to restart it, and 2 on a bad configuration;")
		fmt.Fprintln(stderr, "       runs the Go scheduler on one CPU at a time unless GOMAXPROCS is set in its environment)")
		fs.PrintDefaults()
	}
	var inv invocation
	fs.StringVar(&inv.opts.Name, "nri-name", "resctrl-mon", "plugin name to register with the runtime")
	fs.StringVar(&inv.opts.Index, "nri-idx", "", "plugin index (two digits) to register with (default "+nriplugin.DefaultIndex+"; a pre-registered plugin gets it from its file name)")
	fs.StringVar(&inv.opts.Socket, "nri-socket", "", "the runtime's NRI socket (default NRI's, /var/run/nri/nri.sock)")
	fs.DurationVar(&inv.opts.SweepEvery, "sweep-every", nriplugin.DefaultSweepEvery, "how often idle groups past the retention window are removed")
	fs.StringVar(&inv.export.Listen, "listen", "", "also serve the node's metrics, as resctrl-mon serve does, on this `host:port`; none: no exporter")
	fs.StringVar(&inv.export.WebConfigFile, "web.config.file", "", "exporter-toolkit web configuration (TLS, basic auth) for --listen and --health-listen")
	fs.BoolVar(&inv.export.PressureAverages, "pressure-averages", false, "with --listen, also export the kernel's 10/60/300 s pressure averages")
	fs.StringVar(&inv.health.Listen, "health-listen", "", "serve the adapter's own metrics, /healthz (liveness) and /readyz (readiness) on this `host:port`; none: not served (--listen serves them too)")
	fs.DurationVar(&inv.stuckAfter, "stuck-after", nriplugin.DefaultStuckAfter, "how long past its budget an event's work may go on before /healthz says the adapter is stuck")
	if err := fs.Parse(args); err != nil {
		return invocation{}, err
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "resctrl-mon-nri: unexpected arguments %q\n", fs.Args())
		return invocation{}, errors.New("bad usage")
	}
	if inv.opts.SweepEvery < time.Second {
		fmt.Fprintf(stderr, "resctrl-mon-nri: --sweep-every %s: want at least 1s\n", inv.opts.SweepEvery)
		return invocation{}, errors.New("bad usage")
	}
	if inv.export.Listen == "" && inv.export.PressureAverages {
		fmt.Fprintf(stderr, "resctrl-mon-nri: --pressure-averages needs --listen\n")
		return invocation{}, errors.New("bad usage")
	}
	if inv.export.Listen == "" && inv.health.Listen == "" && inv.export.WebConfigFile != "" {
		fmt.Fprintf(stderr, "resctrl-mon-nri: --web.config.file needs --listen or --health-listen\n")
		return invocation{}, errors.New("bad usage")
	}
	if inv.stuckAfter <= 0 {
		fmt.Fprintf(stderr, "resctrl-mon-nri: --stuck-after %s: want a positive duration\n", inv.stuckAfter)
		return invocation{}, errors.New("bad usage")
	}
	inv.health.WebConfigFile = inv.export.WebConfigFile
	inv.configPath, inv.set = flags.Path(), flags.Given()
	return inv, nil
}
