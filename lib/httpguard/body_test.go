package httpguard_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/httpguard"
)

// bodyRequests are requests announcing a body that never comes: a declared length (below
// and above net/http's 256 KiB that it would read after the handler to reuse the
// connection), chunked, on the methods a client may put them on.
var bodyRequests = map[string]string{
	"GET with a length":      "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n",
	"HEAD with a length":     "HEAD / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n",
	"POST with a big length": "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n",
	"POST chunked":           "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
	"PUT expecting 100":      "PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n",
}

// TestBodyRefusedAtOnce: a request whose body never comes is answered 413 with
// `Connection: close` and its connection closed by the server long before the read timeout
// (a minute here), its place in the cap freed; the handler never runs. Also when something
// wraps the server's handler after Server made it, as exporter-toolkit's web.Serve does with
// its basic auth: the guard still answers first.
func TestBodyRefusedAtOnce(t *testing.T) {
	t.Parallel()
	for _, wrapped := range []bool{false, true} {
		for name, req := range bodyRequests {
			t.Run(fmt.Sprintf("%s/wrapped=%v", name, wrapped), func(t *testing.T) {
				t.Parallel()
				ran := make(chan string, 1)
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					ran <- r.Method + " " + r.URL.Path
					_, _ = io.WriteString(w, "ok\n")
				})
				g := httpguard.New(httpguard.Limits{MaxConnections: 2, ReadTimeout: time.Minute, ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute})
				srv := g.Server(h, nil)
				if wrapped {
					// As web.Serve does: replaced before serving, answering without reading the body.
					srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
						w.Header().Set("WWW-Authenticate", "Basic")
						http.Error(w, "unauthorized", http.StatusUnauthorized)
					})
				}
				addr := serveOn(t, g, srv)
				c := dial(t, addr)
				if _, err := io.WriteString(c, req); err != nil {
					t.Fatal(err)
				}
				// 10 s for what must come at once: the server's read timeout is a minute.
				_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					t.Fatalf("no answer to a request whose body never comes: %v", err)
				}
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
					t.Errorf("answer %q, Connection %q; want 413 and close", resp.Status, resp.Header.Get("Connection"))
				}
				if err := closedByServer(c); err != nil {
					t.Errorf("the connection was not closed by the server: %v", err)
				}
				waitStats(t, g, "its place freed", func(s httpguard.Stats) bool { return s.Open == 0 })
				select {
				case r := <-ran:
					t.Errorf("the handler ran for %s", r)
				default:
				}
			})
		}
	}
}

// TestBodilessRequestsServed: a request without a body, or with an empty one declared, is
// the handler's.
func TestBodilessRequestsServed(t *testing.T) {
	t.Parallel()
	_, addr := serve(t, httpguard.Limits{}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") }))
	for _, req := range []string{
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
		"GET / HTTP/1.0\r\n\r\n",
	} {
		c := dial(t, addr)
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%q: %v", req, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%q: %s, want 200", strings.SplitN(req, "\r\n", 2)[0], resp.Status)
		}
	}
}
