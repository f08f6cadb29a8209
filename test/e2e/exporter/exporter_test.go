package exporter_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// startServe runs `resctrl-mon serve` on a port the kernel picks, and waits until it says
// where it listens.
func startServe(t *testing.T, cfgPath string, args ...string) *e2e.Served {
	t.Helper()
	return e2e.RunServe(t, exec.Command(e2e.Binaries.CLI, append([]string{"--config", cfgPath, "serve", "--listen", "127.0.0.1:0"}, args...)...))
}

// webConfig writes an exporter-toolkit web config with one basic-auth user.
func webConfig(t *testing.T, user, password string) string {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(path, fmt.Appendf(nil, "basic_auth_users:\n  %s: %s\n", user, hash), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitQuery polls Prometheus until check accepts the query's result, and returns it.
func waitQuery(t *testing.T, p *e2e.Prometheus, expr string, timeout time.Duration, check func([]e2e.Sample) error) []e2e.Sample {
	t.Helper()
	var res []e2e.Sample
	err := poll.Until(timeout, func() error {
		var err error
		if res, err = p.Query(expr); err != nil {
			return err
		}
		return check(res)
	})
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return res
}

func count(n int) func([]e2e.Sample) error {
	return func(s []e2e.Sample) error {
		if len(s) != n {
			return fmt.Errorf("%d series, want %d: %v", len(s), n, s)
		}
		return nil
	}
}

func positive(s []e2e.Sample) error {
	if len(s) == 0 {
		return fmt.Errorf("no series")
	}
	for _, x := range s {
		if x.Value <= 0 {
			return fmt.Errorf("%v is not positive", x)
		}
	}
	return nil
}

// TestServeRefuses: a bad flag, address or web config stops serve before it serves, with
// the reason.
func TestServeRefuses(t *testing.T) {
	t.Parallel()
	e2e.BuildBinaries(t)
	bad := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(bad, []byte("basic_auth_users:\n  prom: not-a-bcrypt-hash\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"--listen", "nonsense"}, `--listen "nonsense"`},
		{[]string{"--listen", "127.0.0.1:99999"}, `--listen "127.0.0.1:99999"`},
		{[]string{"--web.config.file", bad}, "--web.config.file " + bad + ": crypto/bcrypt"},
		{[]string{"--web.config.file", "/nonexistent/web.yml"}, "no such file or directory"},
		{[]string{"extra"}, "serve takes no arguments"},
	} {
		out, err := exec.Command(e2e.Binaries.CLI, append([]string{"serve"}, tc.args...)...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("serve %v: %v, %s; want a failure saying %q", tc.args, err, out, tc.want)
		}
	}
}

// TestExporterPrometheus: a real Prometheus scrapes serve (basic auth) every second while
// runc containers with the hook run on the simulator with AET: every family with its type
// and labels, a busy pod's counters rising faster than an idle one's, an Unavailable counter
// dropping its series and raising the error counter, a group re-made on a new life never
// seen as a counter reset, and a clean SIGTERM.
func TestExporterPrometheus(t *testing.T) {
	t.Parallel()
	e := e2e.NewRecEnv(t, resctrlsim.Options{PerfPkgDomains: 1, L3Domains: 2}, "retention: 1h\n")
	busy := e.Bundle(e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "busy"), "sh", "-c", "while :; do :; done")
	idle := e.Bundle(e2e.CRIOPod(e2e.PodUIDB, e2e.SandboxOf('b'), "idle"), "sleep", "100000")
	for id, b := range map[string]*e2e.Bundle{"exp-busy": busy, "exp-idle": idle} {
		if err := e.R.Run(id, b); err != nil {
			t.Fatal(err)
		}
	}
	s := startServe(t, e.CfgPath, "--web.config.file", webConfig(t, "prom", "s3cret"))
	if code, body := e2e.HTTPGet(t, "http://"+s.Addr+"/metrics", "", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without credentials: %d %s, want 401", code, body)
	}
	if code, body := e2e.HTTPGet(t, "http://"+s.Addr+"/healthz", "prom", "s3cret"); code != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz: %d %s", code, body)
	}
	p := e2e.StartPrometheus(t, e2e.ScrapeTarget{Job: "resctrl-mon", Address: s.Addr, User: "prom", Password: "s3cret"})
	waitQuery(t, p, `up{job="resctrl-mon"} == 1`, 30*time.Second, count(1))
	waitQuery(t, p, "resctrl_mon_mbm_total_bytes_total", 30*time.Second, count(4))

	checkFamilies(t, p)

	// The busy pod's counters rise faster than the idle one's.
	for _, m := range []string{"resctrl_mon_mbm_total_bytes_total", "resctrl_mon_mbm_local_bytes_total", "resctrl_mon_core_energy_joules_total", "resctrl_mon_activity_farads_total"} {
		rate := fmt.Sprintf(`sum by (pod_uid) (rate(%s[5s]))`, m)
		waitQuery(t, p, fmt.Sprintf(`sum(rate(%s{pod_uid="%s"}[5s]))`, m, e2e.PodUIDA), 30*time.Second, positive)
		byPod := map[string]float64{}
		for _, x := range waitQuery(t, p, rate, 10*time.Second, count(2)) {
			byPod[x.Labels["pod_uid"]] = x.Value
		}
		if byPod[e2e.PodUIDA] <= 10*byPod[e2e.PodUIDB] {
			t.Errorf("%s: busy pod %v/s, idle pod %v/s", m, byPod[e2e.PodUIDA], byPod[e2e.PodUIDB])
		}
	}

	// An Unavailable counter: its series go, the error counter rises, the rest stays.
	const errs = `resctrl_mon_mon_data_read_errors_total{reason="Unavailable"}`
	e.Sim.SetCounterState("mbm_total_bytes", "Unavailable", "mon_groups/"+e2e.PodUIDA)
	waitQuery(t, p, errs+" > 0", 20*time.Second, count(1))
	waitQuery(t, p, `resctrl_mon_mbm_total_bytes_total{pod_uid="`+e2e.PodUIDA+`"}`, 20*time.Second, count(0))
	waitQuery(t, p, `resctrl_mon_mbm_total_bytes_total{pod_uid="`+e2e.PodUIDB+`"}`, 5*time.Second, count(2))
	waitQuery(t, p, `resctrl_mon_mbm_local_bytes_total{pod_uid="`+e2e.PodUIDA+`"}`, 5*time.Second, count(2))
	e.Sim.SetCounterState("mbm_total_bytes", "clear", "mon_groups/"+e2e.PodUIDA)
	waitQuery(t, p, `resctrl_mon_mbm_total_bytes_total{pod_uid="`+e2e.PodUIDA+`"}`, 20*time.Second, count(2))

	// The busy pod's group disappears and reconcile re-makes it on a new RMID (a new life,
	// its counters restart): Prometheus never sees a counter go down.
	if err := os.Remove(filepath.Join(e.Sim.Dir, "mon_groups", e2e.PodUIDA)); err != nil {
		t.Fatal(err)
	}
	if acts := e.Reconcile(); !e2e.HasAction(acts, "recreated", "mon_groups/"+e2e.PodUIDA) {
		t.Fatalf("reconcile did not re-make the group: %+v", acts)
	}
	waitQuery(t, p, `resctrl_mon_mon_data_resets_total{cause="new_life"} > 0`, 20*time.Second, count(1))
	waitQuery(t, p, `resctrl_mon_pod_info{pod_uid="`+e2e.PodUIDA+`",state="late-assigned"}`, 20*time.Second, count(1))
	before := waitQuery(t, p, `sum(resctrl_mon_mbm_total_bytes_total{pod_uid="`+e2e.PodUIDA+`"})`, 5*time.Second, count(1))[0].Value
	waitQuery(t, p, fmt.Sprintf(`sum(resctrl_mon_mbm_total_bytes_total{pod_uid="%s"}) > %g`, e2e.PodUIDA, before), 20*time.Second, count(1))
	for _, m := range []string{"resctrl_mon_mbm_total_bytes_total", "resctrl_mon_mbm_local_bytes_total", "resctrl_mon_core_energy_joules_total", "resctrl_mon_activity_farads_total"} {
		waitQuery(t, p, fmt.Sprintf(`resets(%s[5m]) > 0`, m), 5*time.Second, count(0))
		waitQuery(t, p, fmt.Sprintf(`min_over_time(rate(%s[3s])[2m:1s]) < 0`, m), 5*time.Second, count(0))
	}

	checkDashboard(t, p, "../../../install/grafana/resctrl-mon.json")
	checkDocQueries(t, p, "../../../docs/operations/prometheus.md")
	s.Stop(t)
}

// checkDashboard runs every query of the Grafana dashboard (its panels' and its variables')
// against Prometheus, with Grafana's variables filled in, and wants data from each.
func checkDashboard(t *testing.T, p *e2e.Prometheus, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	fill := strings.NewReplacer("$__rate_interval", "5s", "$__range", "5m", "$namespace", ".*", "$pod", ".*")
	queries := 0
	for _, panel := range d.Panels {
		for _, tg := range panel.Targets {
			queries++
			waitQuery(t, p, fill.Replace(tg.Expr), 10*time.Second, func(s []e2e.Sample) error {
				if len(s) == 0 {
					return fmt.Errorf("panel %q: no data", panel.Title)
				}
				return nil
			})
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((.+), *(\w+)\)$`)
	for _, v := range d.Templating.List {
		if v.Definition == "" {
			continue
		}
		m := labelValues.FindStringSubmatch(v.Definition)
		if m == nil {
			t.Errorf("variable %s: %q is not label_values(query, label)", v.Name, v.Definition)
			continue
		}
		queries++
		waitQuery(t, p, fill.Replace(m[1]), 10*time.Second, func(s []e2e.Sample) error {
			for _, x := range s {
				if x.Labels[m[2]] != "" {
					return nil
				}
			}
			return fmt.Errorf("variable %s: no values of %s", v.Name, m[2])
		})
	}
	if queries < 10 {
		t.Errorf("the dashboard has %d queries: was it read?", queries)
	}
}

// checkFamilies asks Prometheus for each family: its type as scraped, and its labels.
func checkFamilies(t *testing.T, p *e2e.Prometheus) {
	t.Helper()
	podLabels := []string{"pod_uid", "namespace", "pod", "group"}
	for _, f := range []struct {
		name, typ string
		series    int // 0: at least one
		labels    []string
		match     map[string]string
	}{
		{"resctrl_mon_llc_occupancy_bytes", "gauge", 4, append(podLabels, "resource", "domain"), map[string]string{"resource": "L3", "namespace": "e2e", "pod": "pod"}},
		{"resctrl_mon_mbm_total_bytes_total", "counter", 4, append(podLabels, "resource", "domain"), map[string]string{"resource": "L3"}},
		{"resctrl_mon_mbm_local_bytes_total", "counter", 4, append(podLabels, "resource", "domain"), map[string]string{"resource": "L3"}},
		{"resctrl_mon_core_energy_joules_total", "counter", 2, append(podLabels, "resource", "domain"), map[string]string{"resource": "PERF_PKG", "domain": "0"}},
		{"resctrl_mon_activity_farads_total", "counter", 2, append(podLabels, "resource", "domain"), map[string]string{"resource": "PERF_PKG", "domain": "0"}},
		{"resctrl_mon_pod_info", "gauge", 2, append(podLabels, "state"), map[string]string{"state": "active"}},
		{"resctrl_mon_groups", "gauge", len(inventory.States), []string{"state"}, nil},
		{"resctrl_mon_rmids_used", "gauge", 1, nil, nil},
		{"resctrl_mon_num_rmids", "gauge", 1, nil, nil},
		{"resctrl_mon_snapshots", "gauge", 2, []string{"kind"}, nil},
		{"resctrl_mon_failures_total", "counter", 0, []string{"reason"}, nil},
		{"resctrl_mon_outcomes_total", "counter", len(vocab.Sources) * len(vocab.Actions), []string{"source", "action"}, nil},
		{"resctrl_mon_snapshots_written_total", "counter", 2, []string{"kind"}, nil},
		{"resctrl_mon_mon_data_resets_total", "counter", len(exporter.ResetCauses), []string{"cause"}, nil},
		{"resctrl_mon_mon_data_read_errors_total", "counter", 0, []string{"reason"}, nil},
		{"resctrl_mon_source_errors_total", "counter", 0, []string{"source"}, nil},
		{"resctrl_mon_scrape_duration_seconds", "gauge", 1, nil, nil},
		{"resctrl_mon_pressure_available", "gauge", 1, nil, nil},
		{"resctrl_mon_inventory_up", "gauge", 1, nil, nil},
	} {
		res := waitQuery(t, p, f.name, 10*time.Second, func(s []e2e.Sample) error {
			if (f.series == 0 && len(s) == 0) || (f.series != 0 && len(s) != f.series) {
				return fmt.Errorf("%d series, want %d", len(s), f.series)
			}
			return nil
		})
		if typ, err := p.Type(f.name); err != nil || typ != f.typ {
			t.Errorf("%s: type %q (%v), want %s", f.name, typ, err, f.typ)
		}
		for _, x := range res {
			for _, l := range f.labels {
				if x.Labels[l] == "" {
					t.Errorf("%s: series %v lacks label %s", f.name, x.Labels, l)
				}
			}
			for k, v := range f.match {
				if x.Labels[k] != v {
					t.Errorf("%s: series %v: %s is not %q", f.name, x.Labels, k, v)
				}
			}
		}
	}
	// The hooks' own outcomes: each pod's group was made once, by the createRuntime hook.
	waitQuery(t, p, `resctrl_mon_outcomes_total{source="hook",action="created"}`, 10*time.Second, func(s []e2e.Sample) error {
		if len(s) != 1 || s[0].Value < 2 {
			return fmt.Errorf("%v, want one series of at least 2 (two pods)", s)
		}
		return nil
	})
	if v := waitQuery(t, p, "resctrl_mon_pressure_available", 5*time.Second, count(1))[0].Value; v == 1 {
		for _, uid := range []string{e2e.PodUIDA, e2e.PodUIDB} {
			res := waitQuery(t, p, `resctrl_mon_pressure_cpu_waiting_seconds_total{pod_uid="`+uid+`"}`, 10*time.Second, count(1))
			if res[0].Labels["container"] == "" {
				t.Errorf("pressure of %s's container has no container label: %v", uid, res[0].Labels)
			}
		}
		if typ, _ := p.Type("resctrl_mon_pressure_cpu_waiting_seconds_total"); typ != "counter" {
			t.Errorf("pressure type %q, want counter", typ)
		}
	}
}

// checkDocQueries runs each query of the Prometheus page's "Example PromQL" section (its
// promql block, one query a line) and wants data from each. The page says 2m windows; with a
// 1 s scrape interval and a test that runs for a minute, 5s ones do.
func checkDocQueries(t *testing.T, p *e2e.Prometheus, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Example PromQL\n")
	_, block, ok2 := strings.Cut(sec, "```promql\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("%s: no promql block in the Example PromQL section", path)
	}
	n := 0
	for line := range strings.Lines(block) {
		q := strings.TrimSpace(line)
		if q == "" || strings.HasPrefix(q, "#") {
			continue
		}
		n++
		waitQuery(t, p, strings.ReplaceAll(q, "[2m]", "[5s]"), 10*time.Second, func(s []e2e.Sample) error {
			if len(s) == 0 {
				return fmt.Errorf("documented query: no data")
			}
			return nil
		})
	}
	if n < 5 {
		t.Errorf("%d documented queries: was the block read?", n)
	}
}
