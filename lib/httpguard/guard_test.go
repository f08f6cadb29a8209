package httpguard_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/httpguard"
)

func TestWithDefaults(t *testing.T) {
	t.Parallel()
	d := httpguard.Defaults()
	for _, c := range []struct {
		name string
		in   httpguard.Limits
		want httpguard.Limits
	}{
		{"zero is every default", httpguard.Limits{}, d},
		{"negative is a default", httpguard.Limits{WriteTimeout: -1, MaxConnections: -3}, d},
		{"set fields are kept", httpguard.Limits{IdleTimeout: time.Second, MaxConnections: 3},
			func() httpguard.Limits { l := d; l.IdleTimeout, l.MaxConnections = time.Second, 3; return l }()},
	} {
		if got := c.in.WithDefaults(); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// serve runs a guarded server for h on loopback until the test ends.
func serve(t *testing.T, lim httpguard.Limits, h http.Handler) (*httpguard.Guard, string) {
	t.Helper()
	g := httpguard.New(lim)
	return g, serveOn(t, g, g.Server(h, nil))
}

// serveOn serves srv, made by g, on loopback until the test ends.
func serveOn(t *testing.T, g *httpguard.Guard, srv *http.Server) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(g.Listener(l)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// get sends a whole GET on c and returns the status line.
func get(c net.Conn, path string) (string, error) {
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return "", err
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	return bufio.NewReader(c).ReadString('\n')
}

// closedByServer waits (10 s at most) for c to read EOF or a reset: the server closed it.
func closedByServer(c net.Conn) error {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return err
	}
	return nil // EOF (nil from Copy) or a reset
}

// waitStats polls the guard until cond holds (10 s at most).
func waitStats(t *testing.T, g *httpguard.Guard, what string, cond func(httpguard.Stats) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond(g.Stats()) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s: %+v", what, g.Stats())
		}
		time.Sleep(5 * time.Millisecond) // polling a condition with a deadline
	}
}

// TestNewcomerEvictsOldestWaiting: at the cap, a fresh client is served and the oldest
// connection that never sent a request is closed for it, not a newer one.
func TestNewcomerEvictsOldestWaiting(t *testing.T) {
	t.Parallel()
	const max = 4
	// Long timeouts: only eviction may close anything here.
	g, addr := serve(t, httpguard.Limits{MaxConnections: max, ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute},
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") }))
	stalled := make([]net.Conn, max)
	for i := range stalled {
		stalled[i] = dial(t, addr)
		_, _ = io.WriteString(stalled[i], "GET /half") // never finished
		waitStats(t, g, "the stalled connection admitted", func(s httpguard.Stats) bool { return s.Open == i+1 })
	}
	fresh := dial(t, addr)
	if line, err := get(fresh, "/healthz"); err != nil || !strings.Contains(line, " 200 ") {
		t.Fatalf("a fresh client at the cap: %q, %v", line, err)
	}
	if err := closedByServer(stalled[0]); err != nil {
		t.Errorf("the oldest stalled connection was not closed: %v", err)
	}
	if s := g.Stats(); s.Evicted != 1 || s.Open != max || s.Refused != 0 {
		t.Errorf("stats %+v, want 1 evicted, %d open", s, max)
	}
	// The others were kept: they still get an answer once they finish their request.
	if _, err := io.WriteString(stalled[1], " HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stalled[1]).ReadString('\n'); err != nil || !strings.Contains(line, " 404 ") && !strings.Contains(line, " 200 ") {
		t.Errorf("a newer stalled connection, finished: %q, %v", line, err)
	}
}

// TestBusyConnectionsAreKept: when every connection is in a request, a newcomer is closed
// and no request in progress is cut.
func TestBusyConnectionsAreKept(t *testing.T) {
	t.Parallel()
	const max = 3
	release := make(chan struct{})
	entered := make(chan struct{}, max)
	g, addr := serve(t, httpguard.Limits{MaxConnections: max}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		entered <- struct{}{}
		<-release
		_, _ = io.WriteString(w, "done\n")
	}))
	busy := make([]net.Conn, max)
	for i := range busy {
		busy[i] = dial(t, addr)
		if _, err := io.WriteString(busy[i], "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		<-entered
	}
	late := dial(t, addr)
	if err := closedByServer(late); err != nil {
		t.Errorf("a newcomer while every connection is busy was not closed: %v", err)
	}
	waitStats(t, g, "the newcomer refused", func(s httpguard.Stats) bool { return s.Refused == 1 })
	close(release)
	for i, c := range busy {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.Contains(line, " 200 ") {
			t.Errorf("busy connection %d: %q, %v", i, line, err)
		}
	}
	if s := g.Stats(); s.Evicted != 0 {
		t.Errorf("stats %+v: a busy connection was evicted", s)
	}
}

// TestTimeoutsCloseStalledClients: a client that never finishes its headers and one that
// never reads its response are both closed by the server within their timeouts, the
// handler writing to the second getting the write timeout's error.
func TestTimeoutsCloseStalledClients(t *testing.T) {
	t.Parallel()
	// Far more than both sockets' buffers hold while the client does not read (~4 MiB on
	// loopback), so the handler's write blocks until the timeout cuts it.
	big := strings.Repeat("x", 32<<20)
	wrote := make(chan error, 1)
	g, addr := serve(t, httpguard.Limits{ReadHeaderTimeout: 200 * time.Millisecond, WriteTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond},
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, err := io.WriteString(w, big)
			wrote <- err
		}))
	half := dial(t, addr)
	_, _ = io.WriteString(half, "GET / HTTP/1.1\r\nHost:")
	reader := dial(t, addr)
	_, _ = io.WriteString(reader, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	// Waited on before the guard's count: the count is also 0 before the server has
	// accepted either connection, and a reader let read then gets the whole response.
	select {
	case err := <-wrote:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("the handler's write to the stalled reader ended with %v, want the write timeout", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waited 10s for the write timeout to cut the handler's write to the stalled reader")
	}
	waitStats(t, g, "both closed by the server", func(s httpguard.Stats) bool { return s.Open == 0 })
	if err := closedByServer(half); err != nil {
		t.Errorf("half-sent headers: %v", err)
	}
	n, _ := io.Copy(io.Discard, reader)
	if n >= int64(len(big)) {
		t.Errorf("the stalled reader got the whole response (%d bytes): no write timeout cut it", n)
	}
}
