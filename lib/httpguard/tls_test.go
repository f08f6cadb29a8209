package httpguard_test

import (
	"bufio"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/httpguard"
)

// TestTLSConnectionStates: behind TLS the server reports states for the *tls.Conn; the guard
// must see through it, or a busy TLS connection would look new and be evicted.
func TestTLSConnectionStates(t *testing.T) {
	t.Parallel()
	const max = 2
	release := make(chan struct{})
	entered := make(chan struct{}, max)
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		entered <- struct{}{}
		<-release
		_, _ = io.WriteString(w, "done\n")
	})
	g := httpguard.New(httpguard.Limits{MaxConnections: max})
	ts := httptest.NewUnstartedServer(h)
	ts.Config = g.Server(h, nil)
	ts.Listener = g.Listener(ts.Listener)
	ts.StartTLS()
	t.Cleanup(ts.Close)
	cfg := ts.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	addr := ts.Listener.Addr().String()
	for range max {
		c, err := tls.Dial("tcp", addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		<-entered
		defer func() {
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.Contains(line, " 200 ") {
				t.Errorf("a busy TLS connection: %q, %v", line, err)
			}
		}()
	}
	late := dial(t, addr)
	if err := closedByServer(late); err != nil {
		t.Errorf("a newcomer while every TLS connection is busy: %v", err)
	}
	if s := g.Stats(); s.Evicted != 0 || s.Refused != 1 {
		t.Errorf("stats %+v: want the newcomer refused, no busy connection evicted", s)
	}
	close(release)
}
