package logging

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestFileAndStderrTargets(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "hook.log")
	log, c, err := Open("file:"+path, "test", "")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hello", "k", "v")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "msg=hello") || !strings.Contains(string(b), "k=v") {
		t.Errorf("log file: %q, %v", b, err)
	}
	if _, _, err := Open("udp://x", "test", ""); err == nil {
		t.Errorf("an unknown target was accepted")
	}
}

// listen binds a datagram socket at a fresh path, as a syslog daemon binds /dev/log.
func listen(t *testing.T) (path string, fd int) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "log")
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	return path, fd
}

// receive waits for one datagram; one that never comes fails the test instead of hanging it.
func receive(t *testing.T, fd int) string {
	t.Helper()
	tv := unix.NsecToTimeval((5 * time.Second).Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		t.Fatalf("no datagram on the syslog socket: %v", err)
	}
	return string(buf[:n])
}

// The syslog writer sends one RFC 3164 datagram per record to a listening socket.
func TestSyslogDatagram(t *testing.T) {
	t.Parallel()
	sock, fd := listen(t)
	w, err := dialSyslog(sock, "tagx", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Close() }()
	if _, err := w.Write([]byte("level=INFO msg=hi\n")); err != nil {
		t.Fatal(err)
	}
	got := receive(t, fd)
	if !strings.HasPrefix(got, "<30>") || !strings.Contains(got, "tagx[") || !strings.HasSuffix(got, "]: level=INFO msg=hi") {
		t.Errorf("datagram %q", got)
	}
}

// With a syslog socket, the "syslog" target writes there and leaves the fallback alone.
func TestSyslogTarget(t *testing.T) {
	t.Parallel()
	sock, fd := listen(t)
	fallback := filepath.Join(t.TempDir(), "fallback.log")
	log, c, err := Open("syslog", "test", fallback, WithSyslogSocket(sock))
	if err != nil {
		t.Fatal(err)
	}
	log.Info("to syslog")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, fd); !strings.Contains(got, "msg=\"to syslog\"") || !strings.Contains(got, "test[") {
		t.Errorf("datagram %q", got)
	}
	if _, err := os.Stat(fallback); err == nil {
		t.Errorf("the fallback file was made although syslog listened")
	}
}

// Without a syslog socket the log falls back to the file, making its directory; when the
// fallback cannot be opened either, the error says why both failed.
func TestSyslogFallback(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-syslog-here")
	path := filepath.Join(dir, "sub", "fallback.log")
	log, c, err := Open("syslog", "test", path, WithSyslogSocket(missing))
	if err != nil {
		t.Fatal(err)
	}
	log.Info("fell back", "k", "v")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), `msg="fell back"`) || !strings.Contains(string(b), "k=v") || !strings.Contains(string(b), "prog=test") {
		t.Errorf("fallback file: %q, %v", b, err)
	}

	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = Open("syslog", "test", filepath.Join(file, "fallback.log"), WithSyslogSocket(missing))
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "fallback") {
		t.Errorf("neither syslog nor the fallback: %v", err)
	}
}

func TestAtLeast(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "l.log")
	log, c, err := Open("file:"+path, "test", "")
	if err != nil {
		t.Fatal(err)
	}
	quiet := AtLeast(log.With("lib", "x"), slog.LevelWarn)
	quiet.Info("dropped")
	quiet.Warn("kept")
	_ = c.Close()
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "dropped") || !strings.Contains(string(b), "kept") || !strings.Contains(string(b), "lib=x") {
		t.Errorf("log: %q", b)
	}
}
