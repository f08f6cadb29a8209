package sidecar

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/resctrl-mon/resctrl-mon/lib/psimetrics"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestServe(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	clk := &clock{t: time.Unix(1000, 0)}
	var logs logBuffer
	cfg := validConfig()
	cfg.Proc, cfg.PID, cfg.Label, cfg.CompatSeedMetrics = h.proc, 42, "app", true
	s, err := New(cfg, logs.logger(), clk.now)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	// Before the container: not ready, and no series of it (not zeros).
	if code, body := get(t, srv.URL+"/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "pid 42") {
		t.Errorf("healthz before: %d %q", code, body)
	}
	code, body := get(t, srv.URL+"/metrics")
	if code != http.StatusOK || strings.Contains(body, "_seconds_total{") || strings.Contains(body, "cgroup_monitor_sc_monitored") ||
		!strings.Contains(body, "resctrl_mon_sidecar_ready 0") {
		t.Errorf("metrics before: %d\n%s", code, body)
	}
	if code, _ := get(t, srv.URL+"/health"); code != http.StatusOK {
		t.Errorf("health: %d", code)
	}

	h.start(t, 42, "app")
	clk.add(time.Minute)
	if code, body := get(t, srv.URL+"/healthz"); code != http.StatusOK || !strings.Contains(body, "pid 42") {
		t.Errorf("healthz after: %d %q", code, body)
	}
	_, body = get(t, srv.URL+"/metrics")
	for _, want := range []string{
		`resctrl_mon_pressure_cpu_waiting_seconds_total{container="app"} 0.000385`,
		`resctrl_mon_pressure_io_stalled_seconds_total{container="app"} 7.168173`,
		`resctrl_mon_sidecar_ready 1`,
		`cgroup_monitor_sc_monitored_cpu_psi{type="some",window="total"} 385`,
		`cgroup_monitor_sc_monitored_mem_psi{type="full",window="300s"} 0.15`,
	} {
		// A whole line: the value ends there (0.15 is not 0.155).
		if !slices.Contains(strings.Split(body, "\n"), want) {
			t.Errorf("metrics after: no line %q in\n%s", want, body)
		}
	}
	if !strings.Contains(body, "\ngo_goroutines ") {
		t.Errorf("metrics after: no go_goroutines in\n%s", body)
	}
	if strings.Contains(body, `resctrl_mon_pressure_cpu_stalled_seconds_total`) || strings.Contains(body, `_ratio{`) {
		t.Errorf("a series that should not be there:\n%s", body)
	}
}

// cgroup_monitor_sc's metrics exactly: names, help, type, labels, values as the kernel wrote them.
func TestSeedCollector(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cpu.pressure"), "some avg10=1.50 avg60=0.75 avg300=0.20 total=385\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=9\n")
	writeFile(t, filepath.Join(dir, "io.pressure"), twoL)
	writeFile(t, filepath.Join(dir, "memory.pressure"), "garbage")
	want := `
# HELP cgroup_monitor_sc_monitored_cpu_psi CPU PSI of monitored container
# TYPE cgroup_monitor_sc_monitored_cpu_psi gauge
cgroup_monitor_sc_monitored_cpu_psi{type="some",window="10s"} 1.5
cgroup_monitor_sc_monitored_cpu_psi{type="some",window="300s"} 0.2
cgroup_monitor_sc_monitored_cpu_psi{type="some",window="60s"} 0.75
cgroup_monitor_sc_monitored_cpu_psi{type="some",window="total"} 385
# HELP cgroup_monitor_sc_monitored_io_psi IO PSI of monitored container
# TYPE cgroup_monitor_sc_monitored_io_psi gauge
cgroup_monitor_sc_monitored_io_psi{type="full",window="10s"} 0
cgroup_monitor_sc_monitored_io_psi{type="full",window="300s"} 0.15
cgroup_monitor_sc_monitored_io_psi{type="full",window="60s"} 0
cgroup_monitor_sc_monitored_io_psi{type="full",window="total"} 7168173
cgroup_monitor_sc_monitored_io_psi{type="some",window="10s"} 0.89
cgroup_monitor_sc_monitored_io_psi{type="some",window="300s"} 1.33
cgroup_monitor_sc_monitored_io_psi{type="some",window="60s"} 1.19
cgroup_monitor_sc_monitored_io_psi{type="some",window="total"} 1.5961145e+07
`
	// A family of the main collector: one reading of the files for both.
	c, err := psimetrics.New(psimetrics.Options{Labels: []string{"container"}, Also: newSeedFamily()},
		func() []psimetrics.Target { return []psimetrics.Target{{Dir: dir, Labels: []string{"app"}}} })
	if err != nil {
		t.Fatal(err)
	}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want),
		"cgroup_monitor_sc_monitored_cpu_psi", "cgroup_monitor_sc_monitored_mem_psi", "cgroup_monitor_sc_monitored_io_psi"); err != nil {
		t.Error(err)
	}
}

func TestServeNoPSI(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	if err := os.RemoveAll(filepath.Join(h.proc, "pressure")); err != nil {
		t.Fatal(err)
	}
	h.start(t, 42, "app")
	var logs logBuffer
	cfg := validConfig()
	cfg.Proc, cfg.PID = h.proc, 42
	s, err := New(cfg, logs.logger(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	for range 3 {
		if code, body := get(t, srv.URL+"/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "no pressure stall information") {
			t.Errorf("healthz: %d %q", code, body)
		}
	}
	if n := strings.Count(logs.String(), "pressure stall information"); n != 1 {
		t.Errorf("said %d times:\n%s", n, logs.String())
	}
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	cfg := validConfig()
	cfg.FlagFile = filepath.Join(t.TempDir(), "missing")
	if _, err := New(cfg, logs.logger(), time.Now); err == nil || !strings.Contains(err.Error(), "flag file") {
		t.Errorf("missing flag file: %v", err)
	}
	cfg = validConfig()
	cfg.Port = -1
	if _, err := New(cfg, logs.logger(), time.Now); err == nil {
		t.Error("bad port accepted")
	}
}

// Serve serves until its context ends, then returns cleanly.
func TestServeShutdown(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	var logs logBuffer
	cfg := validConfig()
	cfg.Proc, cfg.PID = h.proc, 42
	s, err := New(cfg, logs.logger(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	if code, _ := get(t, fmt.Sprintf("http://%s/health", ln.Addr())); code != http.StatusOK {
		t.Errorf("health: %d", code)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if _, err := http.Get(fmt.Sprintf("http://%s/health", ln.Addr())); err == nil {
		t.Error("still serving after shutdown")
	}
}
