package exporter_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"

	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/lib/httpguard"
)

// floodBodies: n requests, on n connections at once, announce a body that never comes. With
// the flood in place, a fresh client's probes and scrape are answered within 1 s; every
// flood request is answered 413 or its connection closed, never served.
func floodBodies(t *testing.T, n int, inPlace func()) {
	reqs := []string{
		"GET /metrics HTTP/1.1\r\nHost: flood\r\nContent-Length: 1000\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: flood\r\nTransfer-Encoding: chunked\r\n\r\n",
		"HEAD /healthz HTTP/1.1\r\nHost: flood\r\nContent-Length: 10\r\n\r\n",
		"PUT /metrics HTTP/1.1\r\nHost: flood\r\nContent-Length: 1048576\r\n\r\n", // above what net/http reads after a handler
	}
	conns := floodOf(t, n, "", nil, func(i int) string { return reqs[i%len(reqs)] }, inPlace)
	refused, closed := 0, 0
	for i, c := range conns {
		code, err := floodAnswer(c)
		switch {
		case err != nil:
			t.Errorf("flood connection %d: %v", i, err)
		case code == http.StatusRequestEntityTooLarge:
			refused++
		case code == 0:
			closed++
		default:
			t.Errorf("flood connection %d, whose body never came, was answered %d", i, code)
		}
	}
	t.Logf("n=%d: %d answered 413, %d closed unanswered to make room", n, refused, closed)
	if refused == 0 {
		t.Errorf("no flood request was answered 413: the flood proves nothing")
	}
}

// floodAuth: n requests, on n connections at once, carry a wrong basic-auth password (a
// known user's, or a user unknown), each a different one so that no cache answers it. With
// the flood in place, a fresh client's probes and scrape, with the right password, are
// answered within 1 s; no flood request is served.
func floodAuth(t *testing.T, n int, inPlace func()) {
	// Cost 8 (a quarter of exporter-toolkit's usual 10): under -race a check takes ~0.3 s
	// here, which is enough for checks one at a time to hold the flood's connections for
	// longer than the probe's second, and keeps the test's own checks short.
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), 8)
	if err != nil {
		t.Fatal(err)
	}
	webCfg := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(webCfg, []byte("basic_auth_users:\n  prom: "+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conns := floodOf(t, n, webCfg, []string{"prom", "pw"}, func(i int) string {
		user := "prom"
		if i%4 == 3 {
			user = fmt.Sprintf("nobody-%d", i)
		}
		auth := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%s:wrong-%d", user, i))
		return "GET /metrics HTTP/1.1\r\nHost: flood\r\nAuthorization: Basic " + auth + "\r\n\r\n"
	}, inPlace)
	codes := map[int]int{}
	for i, c := range conns {
		code, err := floodAnswer(c)
		if err != nil {
			t.Errorf("flood connection %d: %v", i, err)
		}
		codes[code]++
		if code != 0 && code != http.StatusUnauthorized && code != http.StatusTooManyRequests {
			t.Errorf("flood connection %d, with a wrong password, was answered %d", i, code)
		}
	}
	t.Logf("n=%d: flood answers by status (0: closed unanswered): %v", n, codes)
}

// floodOf serves a small registry (with the web config webCfg if set), sends n requests made
// by req on n connections at once, nothing after them, and with the flood in place (the
// server has read every flood request, or closed its connection) asks /, /healthz and
// /metrics as a fresh client (with cred, user and password, if set), each to be answered
// 200 within 1 s, the requirement; again until the server has answered or closed every
// flood connection. Then inPlace, and the flood's connections are returned for the caller
// to read.
func floodOf(t *testing.T, n int, webCfg string, cred []string, req func(i int) string, inPlace func()) []net.Conn {
	t.Helper()
	lim := httpguard.Limits{
		ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second,
		MaxConnections: 64,
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "resctrl_mon_flood_test", Help: "One gauge."}))
	l := newCountingListener(t)
	base := "http://" + l.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- exporter.Serve(ctx, l, reg, exporter.ServeOptions{Limits: lim, WebConfigFile: webCfg, Healthy: func() error { return nil }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	ask := func(hc *http.Client, path string) error {
		r, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			return err
		}
		if cred != nil {
			r.SetBasicAuth(cred[0], cred[1])
		}
		start := time.Now()
		resp, err := hc.Do(r)
		if err != nil {
			return fmt.Errorf("GET %s: %w (after %v)", path, err, time.Since(start))
		}
		_, err = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s, %w", path, resp.Status, err)
		}
		return nil
	}
	// Before the flood, with no deadline but the test's: the first check of a password is a
	// bcrypt (two with the guard's own), which the ones after find cached.
	if err := ask(&http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}, "/metrics"); err != nil {
		t.Fatalf("before the flood: %v", err)
	}
	before := l.await(t, "the first scrape's connection closed", func(f floodCounts) bool { return f.closed == f.accepted })

	dialer := net.Dialer{Timeout: 5 * time.Second}
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := dialer.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if _, err := io.WriteString(c, req(i)); err != nil {
			t.Fatalf("send: %v", err)
		}
		conns[i] = c
	}
	l.await(t, "every flood request read by the server or its connection closed", func(f floodCounts) bool {
		return f.accepted-before.accepted >= n && f.readOrClosed-before.readOrClosed >= n
	})
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for round := 1; ; round++ {
		for _, path := range []string{"/", "/healthz", "/metrics"} {
			if err := ask(hc, path); err != nil {
				t.Fatalf("n=%d, round %d: a fresh client during the flood: %v", n, round, err)
			}
		}
		if f := l.counts(); f.answeredOrClosed-before.answeredOrClosed >= n {
			t.Logf("n=%d: /, /healthz and /metrics answered within 1 s in %d round(s) until every flood request was answered or closed", n, round)
			break
		}
	}
	inPlace()
	return conns
}

// floodAnswer reads what the server sent a flood connection: the status of its answer, 0 if
// the server closed it without one (to make room). 10 s at most: by now it has been answered
// or closed.
func floodAnswer(c net.Conn) (int, error) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return 0, fmt.Errorf("neither answered nor closed: %w", err)
	case err != nil:
		return 0, nil // EOF or a reset: closed unanswered
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}
