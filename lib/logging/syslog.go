package logging

import (
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// defaultSyslogSocket is where syslog daemons and journald listen for local messages.
const defaultSyslogSocket = "/dev/log"

// syslogWriter sends each Write as one datagram to the local syslog socket. It is
// log/syslog's local path without the net package, whose initialisation the hook would pay
// on every container start.
type syslogWriter struct {
	fd  int
	tag string
	pid int
}

func dialSyslog(path, tag string) (*syslogWriter, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("syslog socket: %w", err)
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("syslog %s: %w", path, err)
	}
	return &syslogWriter{fd: fd, tag: tag, pid: os.Getpid()}, nil
}

// priority is facility daemon (3) and severity info (6), as RFC 3164 encodes them.
const priority = 3<<3 | 6

func (w *syslogWriter) Write(p []byte) (int, error) {
	msg := fmt.Sprintf("<%d>%s %s[%d]: %s", priority, time.Now().Format(time.Stamp), w.tag, w.pid,
		strings.TrimRight(string(p), "\n"))
	if _, err := unix.Write(w.fd, []byte(msg)); err != nil {
		return 0, fmt.Errorf("syslog: %w", err)
	}
	return len(p), nil
}

func (w *syslogWriter) Close() error { return unix.Close(w.fd) }
