package k8s

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
)

const runbookBase = "https://github.com/resctrl-mon/resctrl-mon/blob/main/docs/operations/alerts.md"

// promRule renders the chart with the PrometheusRule on and returns it.
func promRule(t *testing.T, set ...string) obj {
	t.Helper()
	pr := render(t, append([]string{"prometheusRule.enabled=true"}, set...)...)["PrometheusRule/rm-resctrl-mon"]
	if pr == nil {
		t.Fatalf("%v: no PrometheusRule rendered", set)
	}
	return pr
}

// rules maps each rule's name (alert or record) to the rule.
func rules(pr obj) map[string]any {
	out := map[string]any{}
	for _, g := range list(pr, "spec", "groups") {
		for _, r := range list(g, "rules") {
			name := get(r, "alert")
			if name == nil {
				name = get(r, "record")
			}
			out[fmt.Sprint(name)] = r
		}
	}
	return out
}

func alertNames(pr obj) []string {
	var out []string
	for name, r := range rules(pr) {
		if get(r, "alert") != nil {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// The PrometheusRule is off by default; on, it lands where prometheusRule says, with its
// labels for the Operator's ruleSelector, and every alert has a severity and a runbook that
// is a section of docs/operations/alerts.md.
func TestChartPrometheusRule(t *testing.T) {
	t.Parallel()
	if pr := render(t)["PrometheusRule/rm-resctrl-mon"]; pr != nil {
		t.Error("a PrometheusRule by default")
	}
	for _, mode := range []string{"nri", "hooks"} {
		if out, err := helm(t, "lint", "--strict", chartDir(t), "--set", "mode="+mode, "--set", "prometheusRule.enabled=true", "--set", "exporter.podMonitor.enabled=true"); err != nil {
			t.Errorf("mode %s: %v\n%s", mode, err, out)
		}
	}
	pr := promRule(t)
	if ns := get(pr, "metadata", "namespace"); ns != "monitoring" {
		t.Errorf("namespace %v, want the release's", ns)
	}
	page, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "operations", "alerts.md"))
	if err != nil {
		t.Fatal(err)
	}
	alerts := alertNames(pr)
	if len(alerts) < 10 {
		t.Fatalf("alerts %v, want at least 10", alerts)
	}
	for _, name := range alerts {
		r := rules(pr)[name]
		if s := get(r, "labels", "severity"); s != "warning" && s != "critical" && s != "info" {
			t.Errorf("%s: severity %v", name, s)
		}
		url := fmt.Sprint(get(r, "annotations", "runbook_url"))
		// The alert's section is "## <alert>", whose anchor is the name in lower case (the
		// one the chart writes); docgen's TestLinks resolves the page's own headings.
		anchor, ok := strings.CutPrefix(url, runbookBase+"#")
		if !ok || anchor != strings.ToLower(name) || !strings.Contains(string(page), "\n## "+name+"\n") {
			t.Errorf("%s: runbook_url %s, want %s#%s and a section \"## %s\" in docs/operations/alerts.md", name, url, runbookBase, strings.ToLower(name), name)
		}
		for _, a := range []string{"summary", "description"} {
			if get(r, "annotations", a) == nil {
				t.Errorf("%s: no %s", name, a)
			}
		}
	}

	pr = promRule(t, "prometheusRule.namespace=obs", "prometheusRule.additionalLabels.release=kps",
		"prometheusRule.job=kubernetes-pods", "prometheusRule.runbookBaseURL=https://wiki.example/resctrl",
		"prometheusRule.rmidsUsedPercent=75")
	if ns := get(pr, "metadata", "namespace"); ns != "obs" {
		t.Errorf("namespace %v, want obs", ns)
	}
	if l := get(pr, "metadata", "labels", "release"); l != "kps" {
		t.Errorf("label release = %v, want kps (additionalLabels)", l)
	}
	r := rules(pr)
	for name, want := range map[string]string{
		"ResctrlMonExporterDown":    `up{job="kubernetes-pods", container!="nri-adapter"} == 0`,
		"ResctrlMonAdapterDown":     `resctrl_mon_nri_connected{job="kubernetes-pods"} == 1`,
		"ResctrlMonExporterAbsent":  `absent(up{job="kubernetes-pods"})`,
		"ResctrlMonRMIDsRunningOut": `> 75`,
	} {
		if e := fmt.Sprint(get(r[name], "expr")); !strings.Contains(e, want) {
			t.Errorf("%s: expr %s lacks %s", name, e, want)
		}
	}
	if u := get(r["ResctrlMonPodsPending"], "annotations", "runbook_url"); u != "https://wiki.example/resctrl#resctrlmonpodspending" {
		t.Errorf("runbook_url %v, want runbookBaseURL#resctrlmonpodspending", u)
	}
	// The container that places: in mode nri the adapter, from its own metrics (no
	// kube-state-metrics); in mode hooks reconcile, which has none, from kube-state-metrics.
	nri := rules(promRule(t, "mode=nri"))
	for _, name := range []string{"ResctrlMonAdapterDown", "ResctrlMonAdapterNotSynchronised", "ResctrlMonAdapterEventsFailing"} {
		if e := fmt.Sprint(get(nri[name], "expr")); !strings.Contains(e, "resctrl_mon_nri_") || strings.Contains(e, "kube_") {
			t.Errorf("mode nri: %s expr %s, want the adapter's own metrics", name, e)
		}
	}
	hooks := rules(promRule(t, "mode=hooks"))
	if e := fmt.Sprint(get(hooks["ResctrlMonAdapterDown"], "expr")); !strings.Contains(e, `container="reconcile"`) || !strings.Contains(e, `namespace="monitoring", pod=~"rm-resctrl-mon-[a-z0-9]{5}"`) {
		t.Errorf("mode hooks: ResctrlMonAdapterDown expr %s, want reconcile of the release's pods", e)
	}
	for _, name := range []string{"ResctrlMonAdapterNotSynchronised", "ResctrlMonAdapterEventsFailing"} {
		if _, ok := hooks[name]; ok {
			t.Errorf("mode hooks has %s, an alert of the NRI adapter", name)
		}
	}
}

// prometheusRule.disabled leaves out exactly the rules it names, alert or record; a name that
// is no rule is refused, naming it.
func TestChartPrometheusRuleDisabled(t *testing.T) {
	t.Parallel()
	all := rules(promRule(t))
	some := rules(promRule(t, "prometheusRule.disabled.ResctrlMonPodsPlacedLate=true",
		"prometheusRule.disabled.node_namespace:resctrl_mon_llc_occupancy_bytes:sum=true",
		"prometheusRule.disabled.ResctrlMonRefused=false"))
	for name := range all {
		gone := name == "ResctrlMonPodsPlacedLate" || name == "node_namespace:resctrl_mon_llc_occupancy_bytes:sum"
		if _, kept := some[name]; kept == gone {
			t.Errorf("%s kept: %t, want %t", name, kept, !gone)
		}
	}
	_, err := helm(t, "template", "rm", chartDir(t), "--set", "prometheusRule.enabled=true", "--set", "prometheusRule.disabled.ResctrlMonPodPending=true")
	if err == nil || !strings.Contains(err.Error(), "ResctrlMonPodPending is no rule") {
		t.Errorf("disabling a rule that does not exist: %v, want an error naming it", err)
	}
}

// prometheusRule.for sets the `for` of exactly the alerts it names, the others keep the
// chart's; a name that is no alert (a recording rule's, a misspelt one) or a value that is no
// Prometheus duration is refused, naming it.
func TestChartPrometheusRuleFor(t *testing.T) {
	t.Parallel()
	all := rules(promRule(t))
	some := rules(promRule(t, "prometheusRule.for.ResctrlMonRMIDsRunningOut=0s", "prometheusRule.for.ResctrlMonPodsPlacedLate=1h30m"))
	for name, r := range all {
		want := get(r, "for")
		switch name {
		case "ResctrlMonRMIDsRunningOut":
			want = "0s"
		case "ResctrlMonPodsPlacedLate":
			want = "1h30m"
		}
		if got := get(some[name], "for"); got != want {
			t.Errorf("%s: for %v, want %v", name, got, want)
		}
	}
	for _, c := range []struct{ set, want string }{
		{"prometheusRule.for.ResctrlMonPodPending=1m", "ResctrlMonPodPending is no alert"},
		{"prometheusRule.for.namespace_pod:resctrl_mon_llc_occupancy_bytes:sum=1m", "namespace_pod:resctrl_mon_llc_occupancy_bytes:sum is no alert"},
		{"prometheusRule.for.ResctrlMonRefused=5x", "/prometheusRule/for/ResctrlMonRefused"},
	} {
		_, err := helm(t, "template", "rm", chartDir(t), "--set", "prometheusRule.enabled=true", "--set", c.set)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--set %s: %v, want an error naming %q", c.set, err, c.want)
		}
	}
}

// promtool finds Prometheus' own rule checker (Debian's prometheus package, which test/deps.sh
// installs); missing, the test is skipped, or fails under RESCTRLSIM_REQUIRE=1.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		e2e.Unavailable(t, "promtool not found (test/deps.sh installs Debian's prometheus): %v", err)
	}
	return p
}

// ruleTests is what rules_test.yaml tests: per alert, the cases with and without alerts.
type ruleTests struct {
	Tests []struct {
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
		PromQLExprTest []struct {
			Expr string `yaml:"expr"`
		} `yaml:"promql_expr_test"`
	} `yaml:"tests"`
}

// The rules as rendered pass `promtool check rules` and the unit tests of
// testdata/prometheusrule/rules_test.yaml, which has, for every alert, a case where it fires
// and one where it does not, and a value for every recording rule.
func TestChartPrometheusRulePromtool(t *testing.T) {
	t.Parallel()
	bin := promtool(t)
	pr := promRule(t)
	dir := t.TempDir()
	spec, err := yaml.Marshal(get(pr, "spec"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "test", "k8s", "testdata", "prometheusrule", "rules_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules_test.yaml"), src, 0o644); err != nil {
		t.Fatal(err)
	}

	var tests ruleTests
	if err := yaml.Unmarshal(src, &tests); err != nil {
		t.Fatalf("rules_test.yaml: %v", err)
	}
	fires, quiet, exprs := map[string]bool{}, map[string]bool{}, ""
	for _, g := range tests.Tests {
		for _, a := range g.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
		for _, e := range g.PromQLExprTest {
			exprs += e.Expr + "\n"
		}
	}
	for name, r := range rules(pr) {
		switch {
		case get(r, "alert") != nil && (!fires[name] || !quiet[name]):
			t.Errorf("rules_test.yaml: %s has a firing case: %t, a quiet one: %t; want both", name, fires[name], quiet[name])
		case get(r, "record") != nil && !strings.Contains(exprs, name):
			t.Errorf("rules_test.yaml: no promql_expr_test of %s", name)
		}
	}

	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "rules_test.yaml"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	}
}
