package logging

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// The syslog writer sends one RFC 3164 datagram per record to a listening socket.
func TestSyslogDatagram(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "log")
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Close(fd) }()
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: sock}); err != nil {
		t.Fatal(err)
	}
	w, err := dialSyslogAt(sock, "tagx")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Close() }()
	if _, err := w.Write([]byte("level=INFO msg=hi\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := string(buf[:n])
	if !strings.HasPrefix(got, "<30>") || !strings.Contains(got, "tagx[") || !strings.HasSuffix(got, "]: level=INFO msg=hi") {
		t.Errorf("datagram %q", got)
	}
}

// Without a syslog socket the log falls back to the file.
func TestSyslogFallback(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(syslogSocket); err == nil {
		t.Skip("this host has a syslog socket")
	}
	path := filepath.Join(t.TempDir(), "fallback.log")
	log, c, err := Open("syslog", "test", path)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("fell back")
	_ = c.Close()
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "fell back") {
		t.Errorf("fallback file: %q", b)
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
