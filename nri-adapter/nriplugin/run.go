package nriplugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
)

// ErrRuntimeGone: the runtime closed the connection. The adapter exits non-zero so that its
// supervisor restarts it; it resynchronises on the next start.
var ErrRuntimeGone = errors.New("the runtime closed the NRI connection")

// DefaultIndex orders the adapter among a runtime's plugins when nothing else does: late
// enough that plugins which set the RDT class (CreateContainer) ran before it.
const DefaultIndex = "90"

// DefaultSweepEvery is how often the timer runs the housekeeping.
const DefaultSweepEvery = 30 * time.Second

// Options say how the adapter meets the runtime.
type Options struct {
	Name       string // plugin name (default "resctrl-mon")
	Index      string // plugin index, two digits (ordering among plugins); see DefaultIndex
	Socket     string // the runtime's NRI socket; "" for NRI's default (or a pre-registered plugin's)
	SweepEvery time.Duration
}

// Run connects to the runtime and serves its events until ctx ends (nil) or the runtime
// goes (ErrRuntimeGone).
func (p *Plugin) Run(ctx context.Context, o Options) error {
	launched := os.Getenv(api.PluginIdxEnvVar) != ""
	if o.Index == "" && !launched {
		// Named like a pre-registered plugin, "<idx>-<name>", it takes its name from its
		// file; otherwise the default index.
		if idx, name, err := api.ParsePluginName(filepath.Base(os.Args[0])); err == nil {
			o.Index, o.Name = idx, name
		} else {
			o.Index = DefaultIndex
		}
	}
	if o.Name == "" {
		o.Name = "resctrl-mon"
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = DefaultSweepEvery
	}
	gone := make(chan struct{})
	var once sync.Once
	var opts []stub.Option
	if !launched {
		// A plugin the runtime started has its name and index from it (the stub reads
		// them from the environment and refuses them twice).
		opts = append(opts, stub.WithPluginName(o.Name), stub.WithPluginIdx(o.Index))
	}
	opts = append(opts,
		stub.WithLogger(nriLogger{p}),
		// The runtime closed the connection (it stopped or died): only a restart of the
		// adapter, which resynchronises, can pick up again.
		stub.WithOnClose(func() {
			p.health.setConnected(false)
			once.Do(func() { close(gone) })
		}),
	)
	if o.Socket != "" {
		opts = append(opts, stub.WithSocketPath(o.Socket))
	}
	s, err := stub.New(p, opts...)
	if err != nil {
		return fmt.Errorf("NRI plugin: %w", err)
	}
	p.timeouts.set(s.RequestTimeout)
	// Start returns once the runtime has configured and synchronised the plugin: a
	// configuration it pushed and the adapter refused fails here.
	if err := s.Start(ctx); err != nil {
		if why := p.refused.Load(); why != nil {
			err = *why
		}
		return fmt.Errorf("NRI plugin: registering with the runtime: %w", err)
	}
	defer s.Stop()
	p.health.setConnected(true)
	defer p.health.setConnected(false)
	sweepCtx, stopSweep := context.WithCancel(ctx)
	defer stopSweep()
	go p.sweepLoop(sweepCtx, o.SweepEvery)
	select {
	case <-gone:
		return ErrRuntimeGone
	case <-ctx.Done():
		return nil
	}
}

func (p *Plugin) sweepLoop(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.Sweep()
		}
	}
}

// nriLogger sends NRI's own messages to the adapter's log (whichever it is now).
type nriLogger struct{ p *Plugin }

func (n nriLogger) Debugf(ctx context.Context, f string, a ...any) {
	n.p.logger().DebugContext(ctx, fmt.Sprintf(f, a...), "from", "nri")
}
func (n nriLogger) Infof(ctx context.Context, f string, a ...any) {
	n.p.logger().InfoContext(ctx, fmt.Sprintf(f, a...), "from", "nri")
}
func (n nriLogger) Warnf(ctx context.Context, f string, a ...any) {
	n.p.logger().WarnContext(ctx, fmt.Sprintf(f, a...), "from", "nri")
}
func (n nriLogger) Errorf(ctx context.Context, f string, a ...any) {
	n.p.logger().ErrorContext(ctx, fmt.Sprintf(f, a...), "from", "nri")
}
