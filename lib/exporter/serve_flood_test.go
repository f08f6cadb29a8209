package exporter_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/lib/httpguard"
)

// countingListener sees every connection the server accepts, what it writes to each and
// when the server closes it: what the clients cannot tell apart (a close from a
// timeout, from an eviction) it counts on the server's side.
type countingListener struct {
	net.Listener
	mu       sync.Mutex
	conns    []*countingConn
	changed  chan struct{} // ticks on every accept, first write and close
	accepted int
}

type countingConn struct {
	net.Conn
	l       *countingListener
	written int64 // under l.mu
	closed  bool  // under l.mu
}

func newCountingListener(t *testing.T) *countingListener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return &countingListener{Listener: l, changed: make(chan struct{}, 1)}
}

func (l *countingListener) tick() {
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	cc := &countingConn{Conn: c, l: l}
	l.mu.Lock()
	l.conns = append(l.conns, cc)
	l.accepted++
	l.mu.Unlock()
	l.tick()
	return cc, nil
}

func (c *countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.l.mu.Lock()
	first := c.written == 0 && n > 0
	c.written += int64(n)
	c.l.mu.Unlock()
	if first {
		c.l.tick()
	}
	return n, err
}

func (c *countingConn) Close() error {
	c.l.mu.Lock()
	c.closed = true
	c.l.mu.Unlock()
	c.l.tick()
	return c.Conn.Close()
}

// floodCounts is the server's side of the flood.
type floodCounts struct{ accepted, answeredOrClosed, closed, answeredOpen int }

func (l *countingListener) counts() floodCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := floodCounts{accepted: l.accepted}
	for _, c := range l.conns {
		if c.closed {
			f.closed++
		}
		if c.closed || c.written > 0 {
			f.answeredOrClosed++
		}
		if !c.closed && c.written > 0 {
			f.answeredOpen++
		}
	}
	return f
}

// await waits for cond on the server's counts, on its events, 30 s at most.
func (l *countingListener) await(t *testing.T, what string, cond func(floodCounts) bool) floodCounts {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if f := l.counts(); cond(f) {
			return f
		}
		select {
		case <-l.changed:
		case <-deadline:
			t.Fatalf("waited 30s for %s: %+v", what, l.counts())
		}
	}
}

// bigRegistry renders to ~6 MiB of text, more than a loopback socket's buffers on both
// sides hold, so a client that never reads leaves its scrape's handler blocked in a write,
// holding the gathered scrape (~4 MiB of heap).
func bigRegistry(t *testing.T) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "resctrl_mon_flood_test", Help: "Many series."}, []string{"series", "pad"})
	reg.MustRegister(v)
	pad := strings.Repeat("p", 300)
	for i := range 20000 {
		v.WithLabelValues(fmt.Sprint(i), pad).Set(float64(i))
	}
	return reg
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestScrapeFlood: n clients send GET /metrics and never read, n more never finish their
// headers. A fresh client's /healthz still answers within 1 s, the server closes every
// stalled connection within its (test-sized) timeouts, and the heap held meanwhile is
// bounded by the scrapes allowed in flight, not by the clients. Swept over n, below and
// above the connection cap.
//
// Not parallel: it measures the process's heap, which other tests would share.
func TestScrapeFlood(t *testing.T) {
	reg := bigRegistry(t)
	for _, n := range []int{10, 40, 80} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { flood(t, reg, n) })
	}
}

func flood(t *testing.T, reg *prometheus.Registry, n int) {
	const inFlight = 2
	lim := httpguard.Limits{
		ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second,
		MaxConnections: 64, // below the largest flood: evictions happen too
	}
	l := newCountingListener(t)
	addr := l.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- exporter.Serve(ctx, l, reg, exporter.ServeOptions{Limits: lim, MaxScrapesInFlight: inFlight, Healthy: func() error { return nil }})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	full := fullScrape(t, "http://"+addr+"/metrics")
	l.await(t, "the first scrape's connection closed", func(f floodCounts) bool { return f.closed == f.accepted })
	base, before := l.counts(), liveHeap()

	dialer := net.Dialer{Timeout: 5 * time.Second}
	open := func(req string) net.Conn {
		c, err := dialer.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatalf("send: %v", err)
		}
		return c
	}
	readers := make([]net.Conn, n)
	for i := range readers {
		readers[i] = open("GET /metrics HTTP/1.1\r\nHost: flood\r\n\r\n")
	}
	// Every reader answered (a scrape blocked in its write, or a 503 beyond the limit in
	// flight) or pushed out by a later one, before the half-sent come.
	l.await(t, "every reader answered or closed", func(f floodCounts) bool { return f.answeredOrClosed-base.answeredOrClosed >= n })
	half := make([]net.Conn, n)
	for i := range half {
		half[i] = open("GET /metrics HTTP/1.1\r\nHost: flood\r\n")
	}
	at := l.await(t, "every flood connection accepted", func(f floodCounts) bool { return f.accepted-base.accepted >= 2*n })
	grew := int64(liveHeap()) - int64(before)

	// A fresh client, on a connection of its own.
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := hc.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("/healthz of a fresh client during the flood: %v (after %v)", err, time.Since(start))
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz during the flood: %d", resp.StatusCode)
	}
	t.Logf("n=%d: /healthz in %v; heap grew %d KiB with %d flood connections answered and open", n, time.Since(start), grew>>10, at.answeredOpen)
	if at.answeredOpen == 0 {
		t.Errorf("no reader was answered and still open when the heap was measured: the flood proves nothing")
	}
	// Two gathered scrapes in flight (~4 MiB each) and slack: without the limit in flight,
	// every stuck client holds a gathered scrape, and the heap grows past it at n=10
	// (docs/benchmarks.md, scrapes that stall).
	const bound = 24 << 20
	if grew > bound {
		t.Errorf("heap grew %d MiB during the flood, want under %d MiB", grew>>20, bound>>20)
	}

	// The server closes every stalled connection (timeouts, evictions): nothing here
	// closes one from the client's side.
	l.await(t, "the server to close every flood connection", func(f floodCounts) bool { return f.closed == f.accepted })
	truncated := 0
	for i, c := range append(readers, half...) {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, err := io.Copy(io.Discard, bufio.NewReader(c))
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("flood connection %d: not closed on the client's side after the server closed it", i)
		}
		if got > 64<<10 && got < int64(full) { // more than a 503, less than the whole scrape
			truncated++
		}
	}
	if truncated == 0 {
		t.Errorf("no stalled reader had its scrape cut by the write timeout")
	}
}

// fullScrape is the size of a whole scrape, on a connection closed after it.
func fullScrape(t *testing.T, url string) int {
	t.Helper()
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", url, resp.StatusCode, err)
	}
	return int(n)
}
