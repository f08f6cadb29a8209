package sidecar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/httpguard"
	"github.com/resctrl-mon/resctrl-mon/lib/psi"
	"github.com/resctrl-mon/resctrl-mon/lib/psimetrics"
)

// Sidecar is one configured sidecar: its tracker and its metrics.
type Sidecar struct {
	cfg     Config
	log     *slog.Logger
	tracker *tracker
	reg     *prometheus.Registry
}

// New checks cfg, reads the flag file, and builds the metrics. now is the clock (time.Now
// outside tests).
func New(cfg Config, log *slog.Logger, now func() time.Time) (*Sidecar, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host := cgroup.Host{Proc: cfg.Proc}
	t := &tracker{host: host, log: log, now: now, min: cfg.MinBackoff, max: cfg.MaxBackoff}
	label := cfg.Label
	switch {
	case cfg.PID > 0:
		t.find = byPID(cfg.Proc, cfg.PID)
		log.Info("looking for the container by pid", "pid", cfg.PID)
	case cfg.ContainerName != "":
		t.find = byName(cfg.Proc, cfg.ContainerName)
		if label == "" {
			label = cfg.ContainerName
		}
		log.Info("looking for the container by name", "name", cfg.ContainerName)
	default:
		flag, err := readFlag(cfg.FlagFile)
		if err != nil {
			return nil, err
		}
		t.find = byFlag(cfg.Proc, cfg.FlagPath, flag)
		if label == "" {
			label = flag
		}
		log.Info("looking for the container by its flag file", "path", cfg.FlagPath, "flag", flag)
	}
	// Said once, here: without PSI in the kernel every read of every cgroup fails alike.
	if err := psi.Available(host); errors.Is(err, psi.ErrNoPSI) {
		t.fatal = err
		log.Error("no pressure metrics can be exported on this host", "reason", err.Error())
	}

	targets := func() []psimetrics.Target {
		tgt, err := t.Check()
		if err != nil {
			return nil
		}
		return []psimetrics.Target{{Dir: tgt.Dir, Labels: []string{label}}}
	}
	opts := psimetrics.Options{Labels: []string{"container"}, Averages: cfg.Averages}
	if cfg.CompatSeedMetrics {
		opts.Also = newSeedFamily()
	}
	pc, err := psimetrics.New(opts, targets)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(pc,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "resctrl_mon_sidecar_ready",
			Help: "1 when the watched container is found and its pressure readable, else 0 (/healthz says why).",
		}, func() float64 {
			if _, err := t.Check(); err != nil {
				return 0
			}
			return 1
		}),
		// cgroup_monitor_sc serves the default registry, which has these: its users'
		// dashboards may read them.
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return &Sidecar{cfg: cfg, log: log, tracker: t, reg: reg}, nil
}

// Handler serves /metrics, /healthz (ready: 200 with the container found and its pressure
// readable, else 503 and why) and /health (alive: always 200, cgroup_monitor_sc's route, for
// liveness probes that must not restart the sidecar while its container is missing).
func (s *Sidecar) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(s.log.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
		// Beyond it a scrape gets 503 at once instead of a whole rendered response held.
		MaxRequestsInFlight: 4,
	}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		tgt, err := s.tracker.Check()
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready: %v\n", err)
			return
		}
		fmt.Fprintf(w, "ok: pid %d, cgroup %s\n", tgt.PID, tgt.Dir)
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "alive")
	})
	return mux
}

// Run listens where cfg says and serves until ctx ends (SIGTERM).
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	s, err := New(cfg, log, time.Now)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Address, strconv.Itoa(cfg.Port)))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	log.Info("listening", "address", ln.Addr().String())
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends, then shuts down within shutdownGrace.
func (s *Sidecar) Serve(ctx context.Context, ln net.Listener) error {
	// The exporter's bounds (timeouts, connections, a newcomer before a stalled client):
	// a stalled scraper must not hold the sidecar's memory or its health endpoint.
	g := httpguard.New(httpguard.Limits{})
	srv := g.Server(s.Handler(), slog.NewLogLogger(s.log.Handler(), slog.LevelWarn))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(g.Listener(ln)) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// shutdownGrace bounds how long a shutdown waits for scrapes in flight: well inside the
// terminationGracePeriodSeconds of 5 in cgroup_monitor_sc's manifest.
const shutdownGrace = 3 * time.Second
