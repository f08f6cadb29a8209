package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/resctrl-mon/resctrl-mon/lib/httpguard"
)

// DefaultListen is serve's default address. 9432 is in the range Prometheus keeps for
// exporters (9100-9999, all of it allocated by now, so any number there is some other
// exporter's too), and is none of the ports already taken on a Kubernetes node by what
// runs beside this exporter: node_exporter (9100), cAdvisor (8080), the kubelet (10250,
// 10255).
const DefaultListen = ":9432"

// ServeOptions say how to serve the metrics.
type ServeOptions struct {
	// Listen is the TCP address, host:port ("" is DefaultListen).
	Listen string
	// WebConfigFile is an exporter-toolkit web configuration (TLS, basic auth); "" serves
	// plain HTTP without authentication.
	WebConfigFile string
	// Healthy answers /healthz: nil is healthy, an error says why not (503).
	Healthy func() error
	// Readiness answers /readyz the same way; nil: /readyz answers as /healthz.
	Readiness func() error
	// Log receives the server's own messages; nil discards them.
	Log *slog.Logger
	// Ready, if set, is called with the bound address once the server listens.
	Ready func(addr net.Addr)
	// Limits bound what clients can hold: timeouts on every phase of a connection, header
	// size, open connections (httpguard's package comment says how a fresh /healthz still
	// gets in); zero fields take httpguard.Defaults.
	Limits httpguard.Limits
	// MaxScrapesInFlight caps the /metrics requests served at once; one more is answered
	// 503 at once. Each holds a whole gathered scrape until its client has read it (or the
	// write timeout), so this, with Limits, bounds the memory scrapers can take. 0 is
	// DefaultMaxScrapesInFlight.
	MaxScrapesInFlight int
}

// DefaultMaxScrapesInFlight allows an HA pair of Prometheus servers and two more (a
// person's curl, a second job): scrapes are serialised in the collector anyway.
const DefaultMaxScrapesInFlight = 4

// basicAuthChecks is how many bcrypt checks of passwords not seen before run at once: one,
// as exporter-toolkit runs them, so a flood of wrong passwords takes one core at most and
// leaves the other to scrapes and probes.
const basicAuthChecks = 1

// Listen checks the web configuration and binds the address, so that a bad flag or file
// refuses to start with a clear error before anything is served.
func Listen(o ServeOptions) (net.Listener, error) {
	if o.WebConfigFile != "" {
		if err := web.Validate(o.WebConfigFile); err != nil {
			return nil, fmt.Errorf("--web.config.file %s: %w", o.WebConfigFile, err)
		}
	}
	addr := o.Listen
	if addr == "" {
		addr = DefaultListen
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("--listen %q: want host:port or :port: %w", addr, err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %w", addr, err)
	}
	return l, nil
}

// Handler is the exporter's HTTP surface: /metrics from reg, at most maxInFlight at once
// (0: DefaultMaxScrapesInFlight), /healthz from healthy. A collection error never fails
// the scrape: what could be gathered is served. /healthz shares nothing with /metrics (no
// lock, no limit), so saturated scrapes never hold up a probe.
func Handler(reg *prometheus.Registry, healthy, ready func() error, log *slog.Logger, maxInFlight int) http.Handler {
	if maxInFlight <= 0 {
		maxInFlight = DefaultMaxScrapesInFlight
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		ErrorLog:            slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		Registry:            reg, // promhttp_metric_handler_errors_total
		MaxRequestsInFlight: maxInFlight,
	}))
	if ready == nil {
		ready = healthy
	}
	mux.HandleFunc("/healthz", probe(healthy, "unhealthy: "))
	mux.HandleFunc("/readyz", probe(ready, "not ready: "))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		_, _ = fmt.Fprintln(w, "resctrl-mon exporter: /metrics, /healthz, /readyz")
	})
	return mux
}

// probe answers 200 "ok" when check passes (or there is none), else 503 saying why.
func probe(check func() error, why string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if check != nil {
			if err := check(); err != nil {
				http.Error(w, why+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = fmt.Fprintln(w, "ok")
	}
}

// Serve serves reg on l until ctx is done, then shuts down, giving scrapes in flight up
// to 5 s. TLS and basic auth come from the web configuration file; o.Limits and
// o.MaxScrapesInFlight bound what clients can hold.
func Serve(ctx context.Context, l net.Listener, reg *prometheus.Registry, o ServeOptions) error {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := httpguard.New(o.Limits)
	cfgFile := o.WebConfigFile
	var front []func(http.Handler) http.Handler
	if cfgFile != "" {
		// Basic auth checked ahead of exporter-toolkit's, whose checks run one at a time
		// behind a lock: httpguard.BasicAuth says why.
		front = append(front, httpguard.NewBasicAuth(func() (map[string]string, error) { return webUsers(cfgFile) }, basicAuthChecks).Wrap)
	}
	srv := g.Server(Handler(reg, o.Healthy, o.Readiness, log, o.MaxScrapesInFlight), slog.NewLogLogger(log.Handler(), slog.LevelDebug), front...)
	l = g.Listener(l)
	errc := make(chan error, 1)
	go func() {
		errc <- web.Serve(l, srv, &web.FlagConfig{WebConfigFile: &cfgFile}, log)
	}()
	if o.Ready != nil {
		o.Ready(l.Addr())
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serve on %s: %w", l.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("shut down the server on %s: %w", l.Addr(), err)
	}
	return nil
}
