package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

// Prometheus is a real Prometheus server (Debian's package) started by a test on a loopback
// port, scraping the targets it was given every second, with its storage in a temporary
// directory. It is stopped when the test ends.
type Prometheus struct {
	URL string // http://127.0.0.1:<port>
}

// ScrapeTarget is one job of the Prometheus configuration.
type ScrapeTarget struct {
	Job, Address string
	// User and Password, when set, are sent as basic auth.
	User, Password string
}

// StartPrometheus starts Prometheus and waits until it is ready.
func StartPrometheus(t testing.TB, targets ...ScrapeTarget) *Prometheus {
	t.Helper()
	var jobs string
	for _, tg := range targets {
		jobs += fmt.Sprintf("  - job_name: %q\n    static_configs:\n      - targets: [%q]\n", tg.Job, tg.Address)
		if tg.User != "" {
			jobs += fmt.Sprintf("    basic_auth:\n      username: %q\n      password: %q\n", tg.User, tg.Password)
		}
	}
	return StartPrometheusWith(t, lookBin(t, "prometheus"), jobs)
}

// StartPrometheusWith starts the Prometheus at bin with scrape_configs given as YAML (a list
// at two spaces' indent), such as Kubernetes service discovery (which Debian's build lacks),
// and waits until it is ready.
func StartPrometheusWith(t testing.TB, bin, jobs string) *Prometheus {
	t.Helper()
	dir := shortTempDir(t, "e2e-prom-")
	cfg := "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\nscrape_configs:\n" + jobs
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			_ = err // interrupted on purpose
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			err := <-exited
			t.Logf("prometheus did not stop on SIGINT: killed (%v)", err)
		}
		_ = logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	})
	p := &Prometheus{URL: "http://" + addr}
	err = poll.Until(30*time.Second, func() error {
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("prometheus exited: %w", err)
		default:
		}
		resp, err := http.Get(p.URL + "/-/ready")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("ready: %s", resp.Status)
		}
		return nil
	})
	if err != nil {
		b, _ := os.ReadFile(logf.Name())
		t.Fatalf("prometheus did not get ready: %v\n%s", err, b)
	}
	return p
}

// freePort asks the kernel for a free loopback port. Another process could take it before
// Prometheus binds it: a test host runs nothing else that picks loopback ports at random.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Sample is one series of an instant query's result.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Query runs an instant PromQL query through the HTTP API.
func (p *Prometheus) Query(expr string) ([]Sample, error) {
	var res struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/query?query="+url.QueryEscape(expr), &res); err != nil {
		return nil, fmt.Errorf("query %s: %w", expr, err)
	}
	if res.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", expr, res.Error)
	}
	if res.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: result type %s, want vector", expr, res.Data.ResultType)
	}
	out := make([]Sample, 0, len(res.Data.Result))
	for _, r := range res.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %v: %w", expr, r.Value[1], err)
		}
		out = append(out, Sample{Labels: r.Metric, Value: v})
	}
	return out, nil
}

// Type returns the metric type Prometheus learned from the exporter's # TYPE line.
func (p *Prometheus) Type(metric string) (string, error) {
	var res struct {
		Data map[string][]struct {
			Type string `json:"type"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/metadata?metric="+url.QueryEscape(metric), &res); err != nil {
		return "", err
	}
	if len(res.Data[metric]) == 0 {
		return "", fmt.Errorf("no metadata for %s", metric)
	}
	return res.Data[metric][0].Type, nil
}

func (p *Prometheus) get(path string, v any) error {
	resp, err := http.Get(p.URL + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %s: %w", resp.Status, b, err)
	}
	return nil
}

// Alert is one alert of /api/v1/alerts: those pending or firing (a resolved alert is gone).
type Alert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

// Alerts lists the alerts Prometheus holds now, pending or firing.
func (p *Prometheus) Alerts() ([]Alert, error) {
	var res struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Alerts []Alert `json:"alerts"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/alerts", &res); err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	if res.Status != "success" {
		return nil, fmt.Errorf("alerts: %s", res.Error)
	}
	return res.Data.Alerts, nil
}

// RuleGroups lists the names of the rule groups Prometheus has loaded.
func (p *Prometheus) RuleGroups() ([]string, error) {
	var res struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Groups []struct {
				Name string `json:"name"`
				File string `json:"file"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/rules", &res); err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	if res.Status != "success" {
		return nil, fmt.Errorf("rules: %s", res.Error)
	}
	var out []string
	for _, g := range res.Data.Groups {
		out = append(out, g.Name)
	}
	return out, nil
}
