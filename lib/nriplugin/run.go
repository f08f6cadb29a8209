package nriplugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/containerd/nri/pkg/stub"
)

// ErrRuntimeGone: the runtime closed the connection. The adapter exits non-zero so that its
// supervisor restarts it; it resynchronises on the next start.
var ErrRuntimeGone = errors.New("the runtime closed the NRI connection")

// DefaultSweepEvery is how often the timer runs the housekeeping.
const DefaultSweepEvery = 30 * time.Second

// Options say how the adapter meets the runtime.
type Options struct {
	Name       string // plugin name (default "resctrl-mon")
	Index      string // plugin index, two digits (ordering among plugins)
	Socket     string // the runtime's NRI socket; "" for NRI's default (or a pre-registered plugin's)
	SweepEvery time.Duration
}

// Run connects to the runtime and serves its events until ctx ends (nil) or the runtime
// goes (ErrRuntimeGone).
func (p *Plugin) Run(ctx context.Context, o Options) (retErr error) {
	if o.Name == "" {
		o.Name = "resctrl-mon"
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = DefaultSweepEvery
	}
	var closed atomic.Bool
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := []stub.Option{
		stub.WithPluginName(o.Name),
		stub.WithLogger(nriLogger{p.log}),
		stub.WithOnClose(func() { closed.Store(true); cancel() }),
	}
	if o.Index != "" {
		opts = append(opts, stub.WithPluginIdx(o.Index))
	}
	if o.Socket != "" {
		opts = append(opts, stub.WithSocketPath(o.Socket))
	}
	s, err := stub.New(p, opts...)
	if err != nil {
		return fmt.Errorf("NRI plugin: %w", err)
	}
	go p.sweepLoop(ctx, o.SweepEvery)
	err = s.Run(ctx)
	if closed.Load() {
		return ErrRuntimeGone
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
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

// nriLogger sends NRI's own messages to the adapter's log.
type nriLogger struct{ l *slog.Logger }

func (n nriLogger) Debugf(ctx context.Context, f string, a ...any) {
	n.l.DebugContext(ctx, fmt.Sprintf(f, a...), "from", "nri")
}
func (n nriLogger) Infof(ctx context.Context, f string, a ...any) {
	n.l.InfoContext(ctx, fmt.Sprintf(f, a...), "from", "nri")
}
func (n nriLogger) Warnf(ctx context.Context, f string, a ...any) {
	n.l.WarnContext(ctx, fmt.Sprintf(f, a...), "from", "nri")
}
func (n nriLogger) Errorf(ctx context.Context, f string, a ...any) {
	n.l.ErrorContext(ctx, fmt.Sprintf(f, a...), "from", "nri")
}
