// Package logging opens the log every resctrl-mon binary writes to. Hooks must log somewhere
// durable: runc shows a hook's output only when it fails and crun never does.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Open returns a logger for target: "syslog" (journald picks it up; when no syslog socket
// exists it falls back to the file fallback, kept under fallbackMax with one older
// generation), "stderr", or "file:/path". The closer
// releases the connection or file.
func Open(target, tag, fallback string, opts ...Option) (*slog.Logger, io.Closer, error) {
	o := options{syslogSocket: defaultSyslogSocket}
	for _, opt := range opts {
		opt(&o)
	}
	var w io.WriteCloser
	var toSyslog *syslogWriter
	switch {
	case target == "syslog":
		sw, err := dialSyslog(o.syslogSocket, tag, o.sendTimeout)
		if err == nil {
			w, toSyslog = sw, sw
			break
		}
		// Capped: the fallback is in the state dir, on tmpfs (see fallbackMax).
		f, ferr := openCapped(fallback, fallbackMax)
		if ferr != nil {
			return nil, nil, fmt.Errorf("log: syslog: %w; fallback: %w", err, ferr)
		}
		w = f
	case target == "stderr":
		w = nopCloser{os.Stderr}
	case strings.HasPrefix(target, "file:"):
		f, err := openFile(strings.TrimPrefix(target, "file:"))
		if err != nil {
			return nil, nil, fmt.Errorf("log: %w", err)
		}
		w = f
	default:
		return nil, nil, fmt.Errorf("log: unknown target %q (want syslog, stderr or file:/path)", target)
	}
	var h slog.Handler = slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo})
	if toSyslog != nil {
		h = syslogHandler{h, toSyslog}
	}
	return slog.New(h).With("prog", tag), w, nil
}

// OpenOr opens the log as Open does, for a caller that must go on whatever the log is: when
// it cannot be opened, it says why on w ("tag: why") and logs there instead. With w nil both
// are dropped: a process whose stderr is nobody's (the hook's worker, a join left past its
// budget) has nowhere better.
func OpenOr(w io.Writer, target, tag, fallback string, opts ...Option) (*slog.Logger, io.Closer) {
	log, closer, err := Open(target, tag, fallback, opts...)
	if err == nil {
		return log, closer
	}
	if w == nil {
		return slog.New(slog.DiscardHandler), nopCloser{io.Discard}
	}
	fmt.Fprintf(w, "%s: %v\n", tag, err)
	return slog.New(slog.NewTextHandler(w, nil)), nopCloser{w}
}

// Option changes how Open opens the log.
type Option func(*options)

type options struct {
	syslogSocket string
	sendTimeout  time.Duration
}

// WithSendTimeout bounds each write to syslog: a write that cannot be sent within d (the
// daemon stopped reading and the socket's queue is full) is dropped with an error. For a
// caller that a runtime waits on, which must end in time whatever the log does.
func WithSendTimeout(d time.Duration) Option {
	return func(o *options) { o.sendTimeout = d }
}

// WithSyslogSocket makes the "syslog" target use the datagram socket at path instead of
// /dev/log: for tests, which must see the fallback taken on hosts that do have /dev/log.
func WithSyslogSocket(path string) Option {
	return func(o *options) { o.syslogSocket = path }
}

func openFile(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("log file %s: %w", path, err)
	}
	// O_APPEND: lines from concurrent hook processes interleave whole.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("log file %s: %w", path, err)
	}
	return f, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// AtLeast returns a logger that drops records below level: for chatty libraries (goresctrl
// logs every adopted group at info) whose warnings still matter.
func AtLeast(l *slog.Logger, level slog.Level) *slog.Logger {
	return slog.New(minLevel{l.Handler(), level})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(a), h.min}
}
func (h minLevel) WithGroup(n string) slog.Handler { return minLevel{h.Handler.WithGroup(n), h.min} }
