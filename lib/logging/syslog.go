package logging

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// defaultSyslogSocket is where syslog daemons and journald listen for local messages.
const defaultSyslogSocket = "/dev/log"

// facilityDaemon is syslog's facility 3, as RFC 3164 encodes it in the PRI.
const facilityDaemon = 3 << 3

// Syslog severities (RFC 5424 table 2) for slog's levels.
const (
	sevCrit    = 2
	sevErr     = 3
	sevWarning = 4
	sevInfo    = 6
	sevDebug   = 7
)

// severity maps a slog level to a syslog severity, so that a journal filtered by priority
// (journalctl -p err) shows what resctrl-mon logged as an error.
func severity(l slog.Level) int {
	switch {
	case l > slog.LevelError:
		return sevCrit
	case l >= slog.LevelError:
		return sevErr
	case l >= slog.LevelWarn:
		return sevWarning
	case l >= slog.LevelInfo:
		return sevInfo
	}
	return sevDebug
}

// syslogWriter sends each Write as one datagram to the local syslog socket. It is
// log/syslog's local path without the net package, whose initialisation the hook would pay
// on every container start. The severity of the next datagram is set by syslogHandler.
type syslogWriter struct {
	fd  int
	tag string
	pid int

	mu  sync.Mutex // held by syslogHandler from setting sev to the Write it is for
	sev int
}

// dialSyslog connects to the socket at path. sendTimeout > 0 bounds every send: a syslog
// that stopped reading fills the socket's queue, and a send then blocks until it drains.
func dialSyslog(path, tag string, sendTimeout time.Duration) (*syslogWriter, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("syslog socket: %w", err)
	}
	if sendTimeout > 0 {
		tv := unix.NsecToTimeval(sendTimeout.Nanoseconds())
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
			_ = unix.Close(fd)
			return nil, fmt.Errorf("syslog socket: send timeout: %w", err)
		}
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("syslog %s: %w", path, err)
	}
	return &syslogWriter{fd: fd, tag: tag, pid: os.Getpid(), sev: sevInfo}, nil
}

func (w *syslogWriter) Write(p []byte) (int, error) {
	msg := fmt.Sprintf("<%d>%s %s[%d]: %s", facilityDaemon|w.sev, time.Now().Format(time.Stamp), w.tag, w.pid,
		strings.TrimRight(string(p), "\n"))
	if _, err := unix.Write(w.fd, []byte(msg)); err != nil {
		if err == unix.EAGAIN {
			return 0, fmt.Errorf("syslog: the socket's queue stayed full (is syslog reading?): %w", err)
		}
		return 0, fmt.Errorf("syslog: %w", err)
	}
	return len(p), nil
}

func (w *syslogWriter) Close() error { return unix.Close(w.fd) }

// syslogHandler formats a record with the text handler and sends it at its level's severity.
type syslogHandler struct {
	slog.Handler // a TextHandler writing to w
	w            *syslogWriter
}

func (h syslogHandler) Handle(ctx context.Context, r slog.Record) error {
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	h.w.sev = severity(r.Level)
	return h.Handler.Handle(ctx, r)
}

func (h syslogHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return syslogHandler{h.Handler.WithAttrs(a), h.w}
}

func (h syslogHandler) WithGroup(n string) slog.Handler {
	return syslogHandler{h.Handler.WithGroup(n), h.w}
}
