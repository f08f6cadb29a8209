package exporter_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
)

// promtool finds Prometheus' own linter (Debian's prometheus package). Missing, the test
// skips, or fails with RESCTRLSIM_REQUIRE=1: a lint that silently did not run proves nothing.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("RESCTRLSIM_REQUIRE") == "1" {
			t.Fatalf("promtool not found (RESCTRLSIM_REQUIRE=1 forbids skipping; test/deps.sh installs Debian's prometheus): %v", err)
		}
		t.Skipf("promtool not found: %v", err)
	}
	return p
}

// TestScrapePassesPromtool: a whole scrape of a node's exporter, as `serve` runs it (the
// Go and process metrics, promhttp's own), over the simulator with pods, counters, AET,
// pressure, failures, a counter reading Unavailable and a reset, piped through `promtool
// check metrics`: any lint finding fails, so a name Prometheus' conventions refuse never
// reaches a release.
func TestScrapePassesPromtool(t *testing.T) {
	t.Parallel()
	bin := promtool(t)
	e := newEnv(t, &cgroup.Host{})
	e.place(t, uidBusy, "busy", proctest.Start(t, proctest.Spin))
	e.place(t, uidIdle, "idle", proctest.Start(t, proctest.Sleep))
	_ = e.m.Refuse("c-refused", errors.New("identity that does not add up"))
	e.waitFor(t, "the busy pod's bandwidth", func(f map[string]*dto.MetricFamily) bool {
		return sum(find(f["resctrl_mon_mbm_total_bytes_total"], group(uidBusy))) > 0
	})
	e.sim.SetCounterState("mbm_local_bytes", "Unavailable", "mon_groups/"+uidIdle)

	n := serveNode(t, e.cfg, exporter.NodeOptions{PressureAverages: true}, t.Errorf)
	body := scrape(t, "http://"+n.Addr().String()+"/metrics")
	// The scrape must hold what the lint is meant to see, or a pass proves little.
	for _, want := range []string{
		`resctrl_mon_mbm_total_bytes_total{`, `resctrl_mon_core_energy_joules_total{`, `resctrl_mon_activity_farads_total{`,
		`resctrl_mon_pressure_cpu_waiting_seconds_total{`, `resctrl_mon_failures_total{reason="identity"} 1`,
		`resctrl_mon_mon_data_read_errors_total{reason="Unavailable"}`, `resctrl_mon_mon_data_resets_total{`,
		`go_goroutines `, `process_resident_memory_bytes `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the scrape has no %s", want)
		}
	}
	if strings.Contains(body, `resctrl_mon_mon_data_read_errors_total{reason="Unavailable"} 0`) {
		t.Errorf("the Unavailable counter was not counted: the scrape does not show a failed read")
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil || strings.TrimSpace(out.String()) != "" {
		t.Errorf("promtool check metrics: %v\n%s", err, out.String())
	}
}

// scrape GETs url in Prometheus' text format.
func scrape(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", url, resp.StatusCode, err)
	}
	return string(b)
}
