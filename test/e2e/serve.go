package e2e

import (
	"bufio"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Served is a running `resctrl-mon serve`.
type Served struct {
	Cmd    *exec.Cmd
	Addr   string
	mu     sync.Mutex
	stderr strings.Builder // what serve logged; Log reads it
	Exited chan error
}

// Log is what serve wrote to stderr so far.
func (s *Served) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// ListeningRE finds the address serve listens on in its log.
var ListeningRE = regexp.MustCompile(`msg="serving /metrics and /healthz" address=(\S+)`)

// RunServe starts a serve command line (one listening on a port the kernel picks) and waits
// until it says where it listens.
func RunServe(t *testing.T, cmd *exec.Cmd) *Served {
	t.Helper()
	s := &Served{Cmd: cmd, Exited: make(chan error, 1)}
	pipe, err := s.Cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			s.mu.Lock()
			s.stderr.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := ListeningRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addrc <- m[1]:
				default:
				}
			}
		}
		s.Exited <- s.Cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = s.Cmd.Process.Kill()
		if t.Failed() {
			t.Logf("serve's log:\n%s", s.Log())
		}
	})
	select {
	case s.Addr = <-addrc:
	case err := <-s.Exited:
		t.Fatalf("serve exited before listening: %v\n%s", err, s.Log())
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not say where it listens in 20s\n%s", s.Log())
	}
	return s
}

// Stop sends SIGTERM and waits for a clean exit.
func (s *Served) Stop(t *testing.T) {
	t.Helper()
	if err := s.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.Exited:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v\n%s", err, s.Log())
		}
	case <-time.After(10 * time.Second):
		t.Errorf("serve still running 10s after SIGTERM")
	}
}

// HTTPGet fetches url (with basic auth when user is set) and returns the status and body.
func HTTPGet(t *testing.T, url, user, password string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
