package resctrlsim

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// maxCommandLine bounds one control request; nothing legitimate comes close.
const maxCommandLine = 4096

// ServeControl answers control commands (see ParseCommand) on a unix socket at path, one
// command per line, one answer line each ("ok", JSON for status, or "error: ..."). It
// returns when the listener is closed by the returned function.
func (s *Sim) ServeControl(path string) (stop func() error, err error) {
	_ = os.Remove(path) // a socket left by a killed run
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go s.serveConn(c)
		}
	}()
	return l.Close, nil
}

func (s *Sim) serveConn(c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 0, 512), maxCommandLine)
	for sc.Scan() {
		_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		cmd, err := ParseCommand(sc.Text())
		var out string
		if err == nil {
			out, err = s.Do(cmd)
		}
		if err != nil {
			out = "error: " + err.Error()
		}
		if _, err := fmt.Fprintln(c, out); err != nil {
			return
		}
	}
	if err := sc.Err(); err != nil {
		_, _ = fmt.Fprintln(c, "error: "+err.Error())
	}
}

// Control sends one command to a simulator's control socket and returns its answer.
func Control(path, command string) (string, error) {
	if _, err := ParseCommand(command); err != nil {
		return "", err
	}
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return "", fmt.Errorf("control socket: %w", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintln(c, command); err != nil {
		return "", fmt.Errorf("control socket: send: %w", err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("control socket: read answer: %w", err)
	}
	line = strings.TrimSuffix(line, "\n")
	if msg, ok := strings.CutPrefix(line, "error: "); ok {
		return "", errors.New(msg)
	}
	return line, nil
}
