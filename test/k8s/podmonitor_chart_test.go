package k8s

import (
	"fmt"
	"strings"
	"testing"
)

func podMonitor(t *testing.T, set ...string) any {
	t.Helper()
	pm := render(t, append([]string{"exporter.podMonitor.enabled=true"}, set...)...)["PodMonitor/rm-resctrl-mon"]
	if pm == nil {
		t.Fatalf("%v: no PodMonitor rendered", set)
	}
	return get(pm, "spec", "podMetricsEndpoints", "0")
}

// The PodMonitor keeps the workload's labels by default (honorLabels: the Operator's target
// labels namespace, pod, container would otherwise overwrite the exporter's), names the node,
// and scrapes https exactly when the chart's web config serves TLS.
func TestChartPodMonitorDefaults(t *testing.T) {
	t.Parallel()
	ep := podMonitor(t)
	for key, want := range map[string]any{"port": "metrics", "path": "/metrics", "scheme": "http", "honorLabels": true, "interval": "30s"} {
		if got := get(ep, key); got != want {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	for _, key := range []string{"scrapeTimeout", "tlsConfig", "basicAuth", "metricRelabelings"} {
		if got := get(ep, key); got != nil {
			t.Errorf("%s = %v by default, want none", key, got)
		}
	}
	if rl := list(ep, "relabelings"); len(rl) != 1 || fmt.Sprint(get(rl[0], "sourceLabels")) != "[__meta_kubernetes_pod_node_name]" || get(rl[0], "targetLabel") != "node" {
		t.Errorf("relabelings = %v, want only the node's name as node", rl)
	}
	if got := get(podMonitor(t, "exporter.podMonitor.honorLabels=false"), "honorLabels"); got != false {
		t.Errorf("honorLabels=false: %v", got)
	}
	if got := get(podMonitor(t, "exporter.podMonitor.interval="), "interval"); got != nil {
		t.Errorf("an empty interval renders %v, want none (Prometheus' own)", got)
	}
	for _, tc := range []struct {
		set    []string
		scheme string
	}{
		{[]string{"exporter.webConfig.secretName=rm-web"}, "https"},
		{[]string{"exporter.webConfig.secretName=rm-web", "exporter.webConfig.tls=false"}, "http"},
		{[]string{"exporter.webConfig.tls=true"}, "http"}, // no web config, no TLS
	} {
		if got := get(podMonitor(t, tc.set...), "scheme"); got != tc.scheme {
			t.Errorf("%v: scheme %v, want %s", tc.set, got, tc.scheme)
		}
	}
}

// Every value reaches the endpoint as the Operator's API names it; the user's relabelings
// come after the chart's own.
func TestChartPodMonitorValues(t *testing.T) {
	t.Parallel()
	ep := podMonitor(t,
		"exporter.webConfig.secretName=rm-web",
		"exporter.webConfig.basicAuth=true",
		"exporter.podMonitor.interval=1m",
		"exporter.podMonitor.scrapeTimeout=20s",
		"exporter.podMonitor.tlsConfig.ca.secret.name=rm-ca",
		"exporter.podMonitor.tlsConfig.ca.secret.key=ca.crt",
		"exporter.podMonitor.tlsConfig.serverName=resctrl-mon.monitoring",
		"exporter.podMonitor.tlsConfig.insecureSkipVerify=false",
		"exporter.podMonitor.basicAuth.username.name=rm-auth",
		"exporter.podMonitor.basicAuth.username.key=user",
		"exporter.podMonitor.basicAuth.password.name=rm-auth",
		"exporter.podMonitor.basicAuth.password.key=password",
		"exporter.podMonitor.relabelings[0].targetLabel=cluster",
		"exporter.podMonitor.relabelings[0].replacement=eu-1",
		"exporter.podMonitor.metricRelabelings[0].sourceLabels[0]=__name__",
		"exporter.podMonitor.metricRelabelings[0].regex=go_.*",
		"exporter.podMonitor.metricRelabelings[0].action=drop",
	)
	for _, tc := range []struct {
		path []string
		want any
	}{
		{[]string{"scheme"}, "https"},
		{[]string{"interval"}, "1m"},
		{[]string{"scrapeTimeout"}, "20s"},
		{[]string{"tlsConfig", "ca", "secret", "name"}, "rm-ca"},
		{[]string{"tlsConfig", "ca", "secret", "key"}, "ca.crt"},
		{[]string{"tlsConfig", "serverName"}, "resctrl-mon.monitoring"},
		{[]string{"tlsConfig", "insecureSkipVerify"}, false},
		{[]string{"basicAuth", "username", "name"}, "rm-auth"},
		{[]string{"basicAuth", "username", "key"}, "user"},
		{[]string{"basicAuth", "password", "key"}, "password"},
		{[]string{"relabelings", "0", "targetLabel"}, "node"},
		{[]string{"relabelings", "1", "targetLabel"}, "cluster"},
		{[]string{"relabelings", "1", "replacement"}, "eu-1"},
		{[]string{"metricRelabelings", "0", "sourceLabels", "0"}, "__name__"},
		{[]string{"metricRelabelings", "0", "regex"}, "go_.*"},
		{[]string{"metricRelabelings", "0", "action"}, "drop"},
	} {
		if got := get(ep, tc.path...); got != tc.want {
			t.Errorf("%s = %v, want %v", strings.Join(tc.path, "."), got, tc.want)
		}
	}
}

// A misspelt or misplaced key of the PodMonitor or the PrometheusRule is refused by the
// schema, naming it: the Operator would drop an unknown field silently (honourLabels would
// leave the workload's labels exported_*).
func TestChartMonitoringBadValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ set, want string }{
		{"exporter.podMonitor.honourLabels=true", "honourLabels"},
		{"exporter.podMonitor.honorLabels=yes", "honorLabels"},
		{"exporter.podMonitor.interval=30 seconds", "interval"},
		{"exporter.podMonitor.scrapeTimeout=10", "scrapeTimeout"},
		{"exporter.podMonitor.tlsConfig.insecureSkipVerfy=true", "insecureSkipVerfy"},
		{"exporter.podMonitor.tlsConfig.caFile=/etc/ca.crt", "caFile"},
		{"exporter.podMonitor.tlsConfig.ca.secret.name=rm-ca", "key"},
		{"exporter.podMonitor.basicAuth.user.name=rm-auth", "user"},
		{"exporter.podMonitor.basicAuth.username.name=rm-auth", "password"},
		{"exporter.podMonitor.relabelings[0].targetLable=node", "targetLable"},
		{"exporter.podMonitor.metricRelabelings[0].action=delete", "action"},
		{"exporter.podMonitor.scheme=https", "scheme"},
		{"prometheusRule.enable=true", "enable"},
		{"prometheusRule.labels.release=kps", "labels"},
		{"prometheusRule.rmidsUsedPercent=200", "rmidsUsedPercent"},
		{"prometheusRule.runbookBaseURL=docs/alerts.md", "runbookBaseURL"},
		{"prometheusRule.disabled.ResctrlMonPodsPending=yes", "ResctrlMonPodsPending"},
	} {
		_, err := helm(t, "template", "rm", chartDir(t), "--set", "exporter.podMonitor.enabled=true", "--set", tc.set)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: %v, want an error naming %s", tc.set, err, tc.want)
		}
	}
}
