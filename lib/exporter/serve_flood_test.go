package exporter_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
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
	changed  chan struct{} // ticks on every accept, first read, first write and close
	accepted int
}

type countingConn struct {
	net.Conn
	l       *countingListener
	read    int64 // under l.mu
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

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.l.mu.Lock()
	first := c.read == 0 && n > 0
	c.read += int64(n)
	c.l.mu.Unlock()
	if first {
		c.l.tick()
	}
	return n, err
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
type floodCounts struct{ accepted, readOrClosed, answeredOrClosed, closed, answeredOpen int }

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
		if c.closed || c.read > 0 {
			f.readOrClosed++
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

// TestScrapeFlood: floods of each kind, each swept over its size, below and above the
// connection cap (64):
//   - stall (10, 40, 80): n clients send GET /metrics and never read, n more never finish
//     their headers. A fresh client's /healthz still answers within 1 s, the server closes
//     every stalled connection within its (test-sized) timeouts, and the heap held meanwhile
//     is bounded by the scrapes allowed in flight, not by the clients (flood).
//   - body (16, 64, 256): n requests announce a body that never comes (floodBodies).
//   - auth (16, 64, 256): n requests carry a wrong basic-auth password (floodAuth).
//
// Each flood runs in a process of its own (this test binary started again, floodEnv naming
// it): the stall flood measures the process's heap, which other tests and the other floods
// would share. Apart, they wait out their 5 s timeouts at the same time, beside the
// package's other tests, instead of one after the other; each starts when the one before
// has its flood in place, so what the floods do with the CPU (a 6 MiB scrape gathered, 2n
// connections made, bcrypt) never overlaps: under -race on 2 cores it would outlast the
// timeouts.
func TestScrapeFlood(t *testing.T) {
	if v := os.Getenv(floodEnv); v != "" {
		kind, nv, _ := strings.Cut(v, ":")
		n, err := strconv.Atoi(nv)
		if err != nil {
			t.Fatalf("%s=%q: want kind:n: %v", floodEnv, v, err)
		}
		ready := os.NewFile(3, "flood-in-place") // startFlood's pipe
		inPlace := func() { _ = ready.Close() }
		switch kind {
		case "stall":
			flood(t, bigRegistry(t), n, inPlace)
		case "body":
			floodBodies(t, n, inPlace)
		case "auth":
			floodAuth(t, n, inPlace)
		default:
			t.Fatalf("%s=%q: no flood of kind %q", floodEnv, v, kind)
		}
		return
	}
	t.Parallel()
	var floods []string
	for _, n := range []int{10, 40, 80} {
		floods = append(floods, fmt.Sprintf("stall:%d", n))
	}
	for _, kind := range []string{"body", "auth"} {
		for _, n := range []int{16, 64, 256} {
			floods = append(floods, fmt.Sprintf("%s:%d", kind, n))
		}
	}
	runs := make([]*floodRun, len(floods))
	for i, f := range floods { // all started before any is waited on: -test.parallel is the cores
		runs[i] = startFlood(t, f)
	}
	for i, f := range floods {
		t.Run(strings.Replace(f, ":", "/", 1), runs[i].wait)
	}
}

// floodEnv tells a test process started by TestScrapeFlood which flood it runs.
const floodEnv = "RESCTRL_MON_TEST_FLOOD"

// floodRun is a flood (kind:n) in this test binary started again.
type floodRun struct {
	n   string
	cmd *exec.Cmd
	out bytes.Buffer
}

func startFlood(t *testing.T, n string) *floodRun {
	t.Helper()
	r := &floodRun{n: n, cmd: exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestScrapeFlood$", "-test.count=1", "-test.v")}
	r.cmd.Env = append(os.Environ(), floodEnv+"="+n)
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.out
	inPlace, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = inPlace.Close() }()
	r.cmd.ExtraFiles = []*os.File{w} // its fd 3, closed when its flood is in place
	err = r.cmd.Start()
	_ = w.Close()
	if err != nil {
		t.Fatalf("start the flood %s: %v", n, err)
	}
	_, _ = io.Copy(io.Discard, inPlace) // EOF: in place, or the process ended
	return r
}

// wait passes when the flood's process passed, its output in the test's log.
func (r *floodRun) wait(t *testing.T) {
	err := r.cmd.Wait()
	t.Logf("the flood %s in a process of its own:\n%s", r.n, r.out.Bytes())
	if err != nil {
		t.Fatalf("the flood %s: %v", r.n, err)
	}
	// A process that ran no test exits 0 too (a renamed test, a -test.run matching none).
	if !bytes.Contains(r.out.Bytes(), []byte("--- PASS: TestScrapeFlood")) {
		t.Fatalf("the flood %s did not run in its process", r.n)
	}
}

// flood floods a server of reg with n of each kind; inPlace is called when the flood is
// made and measured, and only the server's timeouts are left to wait for.
func flood(t *testing.T, reg *prometheus.Registry, n int, inPlace func()) {
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

	inPlace()
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

// fullScrape is the size of a whole scrape, on a connection closed after it. Uncompressed,
// as the flood's clients ask for it: gzip of 6 MiB under -race on a busy machine outlasts
// the flood's 5 s write timeout.
func fullScrape(t *testing.T, url string) int {
	t.Helper()
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true}}
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
