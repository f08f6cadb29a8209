package logging

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Each record reaches syslog with its own severity (facility daemon, 3), so a journal
// filtered by priority (journalctl -p err) shows the failures: the PRI of every datagram a
// real datagram socket receives, standing in for /dev/log.
func TestSyslogSeverity(t *testing.T) {
	t.Parallel()
	sock, fd := listen(t)
	log, c, err := Open("syslog", "test", filepath.Join(t.TempDir(), "fallback.log"), WithSyslogSocket(sock))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	log = log.With("k", "v") // a derived logger keeps its severities
	for _, tc := range []struct {
		level slog.Level
		pri   int // daemon (3) << 3 | severity
	}{
		{slog.LevelError, 3<<3 | 3},     // err
		{slog.LevelWarn, 3<<3 | 4},      // warning
		{slog.LevelInfo, 3<<3 | 6},      // info
		{slog.LevelError + 4, 3<<3 | 2}, // above error: crit
	} {
		log.Log(t.Context(), tc.level, "m")
		got := receive(t, fd)
		if want := fmt.Sprintf("<%d>", tc.pri); !strings.HasPrefix(got, want) || !strings.Contains(got, "k=v") {
			t.Errorf("%s: datagram %q, want PRI %s", tc.level, got, want)
		}
	}
}

// A stalled syslog (its socket's queue full: journald not reading) cannot hold a writer
// past its send timeout: the write fails, saying so, instead of blocking.
func TestSyslogStalled(t *testing.T) {
	t.Parallel()
	sock, _ := listen(t) // never read
	fill(t, sock)
	for _, timeout := range []time.Duration{10 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond} {
		log, c, err := Open("syslog", "test", filepath.Join(t.TempDir(), "fallback.log"), WithSyslogSocket(sock), WithSendTimeout(timeout))
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			log.Error("lost")
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("a log write with a %s send timeout still blocked on a stalled syslog after 10s", timeout)
		}
		_ = c.Close()
	}
}

// fill sends to sock until its receive queue is full.
func fill(t *testing.T, sock string) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) })
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: sock}); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, err := unix.Write(fd, []byte("x")); err == unix.EAGAIN {
			return
		} else if err != nil || i > 1<<20 {
			t.Fatalf("filling the syslog socket: %d sent, %v", i, err)
		}
	}
}
