package k8s

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func adapterOf(t *testing.T, set ...string) any {
	t.Helper()
	spec := get(render(t, set...)["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
	c := container(spec, "containers", "nri-adapter")
	if c == nil {
		t.Fatalf("%v: no nri-adapter container", set)
	}
	return c
}

func hasArg(c any, arg string) bool {
	return slices.ContainsFunc(list(c, "command"), func(a any) bool { return a == arg })
}

// The adapter serves its own metrics and probes (--health-listen) on nri.health.port, where
// the exporter listens (exporter.host, the node's address by default), as the port
// `nri-metrics`; kubelet asks /healthz for liveness and /readyz for readiness on it, with
// the timings of values, and --stuck-after says when /healthz fails.
func TestChartAdapterHealth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		set       []string
		listen    string
		probeHost any // nil: none named (the pod's address, which is the node's)
		env       bool
	}{
		{nil, "--health-listen=[$(HOST_IP)]:9433", nil, true},
		{[]string{"nri.health.port=9500"}, "--health-listen=[$(HOST_IP)]:9500", nil, true},
		{[]string{"exporter.host=127.0.0.1", "nri.health.port=19533"}, "--health-listen=[127.0.0.1]:19533", "127.0.0.1", false},
		{[]string{"exporter.host=0.0.0.0"}, "--health-listen=[0.0.0.0]:9433", nil, false},
		{[]string{"exporter.host=fd00::1"}, "--health-listen=[fd00::1]:9433", "fd00::1", false},
	} {
		ad := adapterOf(t, tc.set...)
		if !hasArg(ad, tc.listen) || !hasArg(ad, "--stuck-after=1m") {
			t.Errorf("%v: adapter command %v, want %s and --stuck-after=1m", tc.set, list(ad, "command"), tc.listen)
		}
		env := fmt.Sprint(get(ad, "env"))
		if has := strings.Contains(env, "HOST_IP") && strings.Contains(env, "status.hostIP"); has != tc.env {
			t.Errorf("%v: env %s, want HOST_IP from status.hostIP: %t", tc.set, env, tc.env)
		}
		port := tc.listen[strings.LastIndex(tc.listen, ":")+1:]
		if p := fmt.Sprint(get(ad, "ports", "0", "containerPort")); p != port || get(ad, "ports", "0", "name") != "nri-metrics" {
			t.Errorf("%v: ports %v, want nri-metrics on %s", tc.set, get(ad, "ports"), port)
		}
		for probe, path := range map[string]string{"readinessProbe": "/readyz", "livenessProbe": "/healthz"} {
			h := get(ad, probe, "httpGet")
			if get(h, "path") != path || fmt.Sprint(get(h, "port")) != port || get(h, "host") != tc.probeHost || get(h, "scheme") != nil {
				t.Errorf("%v: %s %v, want %s on port %s, host %v, HTTP", tc.set, probe, get(ad, probe), path, port, tc.probeHost)
			}
		}
	}

	// Timings: the defaults give a stopped adapter 30 s before its restart; every one is
	// a value, and --stuck-after too.
	ad := adapterOf(t)
	for probe, want := range map[string]string{
		"livenessProbe":  "map[failureThreshold:3 periodSeconds:10 timeoutSeconds:5]",
		"readinessProbe": "map[failureThreshold:3 periodSeconds:10 timeoutSeconds:5]",
	} {
		p := get(ad, probe).(map[string]any)
		timings := map[string]any{}
		for k, v := range p {
			if k != "httpGet" {
				timings[k] = v
			}
		}
		if got := fmt.Sprint(timings); got != want {
			t.Errorf("%s timings %s, want %s", probe, got, want)
		}
	}
	ad = adapterOf(t, "nri.health.stuckAfter=20s", "nri.health.livenessProbe.periodSeconds=2",
		"nri.health.livenessProbe.failureThreshold=2", "nri.health.livenessProbe.timeoutSeconds=1",
		"nri.health.livenessProbe.initialDelaySeconds=4", "nri.health.readinessProbe.periodSeconds=3")
	if !hasArg(ad, "--stuck-after=20s") {
		t.Errorf("command %v, want --stuck-after=20s", list(ad, "command"))
	}
	for _, tc := range []struct {
		path []string
		want string
	}{
		{[]string{"livenessProbe", "periodSeconds"}, "2"},
		{[]string{"livenessProbe", "failureThreshold"}, "2"},
		{[]string{"livenessProbe", "timeoutSeconds"}, "1"},
		{[]string{"livenessProbe", "initialDelaySeconds"}, "4"},
		{[]string{"readinessProbe", "periodSeconds"}, "3"},
		{[]string{"readinessProbe", "failureThreshold"}, "3"},
	} {
		if got := fmt.Sprint(get(ad, tc.path...)); got != tc.want {
			t.Errorf("%s = %s, want %s", strings.Join(tc.path, "."), got, tc.want)
		}
	}

	// Mode hooks has no adapter, so no second port anywhere.
	spec := get(render(t, "mode=hooks")["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
	for _, c := range list(spec, "containers") {
		if strings.Contains(fmt.Sprint(get(c, "ports")), "nri-metrics") {
			t.Errorf("mode hooks: %v serves nri-metrics", get(c, "name"))
		}
	}
}

// With the exporter's web config, the adapter serves with it too: HTTPS probes with TLS,
// only a knock on the port with basic auth (kubelet cannot send the password).
func TestChartAdapterHealthWebConfig(t *testing.T) {
	t.Parallel()
	ad := adapterOf(t, "exporter.webConfig.secretName=rm-web")
	if !hasArg(ad, "--web.config.file=/etc/resctrl-mon/web/web-config.yml") {
		t.Errorf("adapter command %v lacks the web config", list(ad, "command"))
	}
	if m := mountAt(ad, "/etc/resctrl-mon/web"); m == nil || get(m, "readOnly") != true || get(m, "name") != "web-config" {
		t.Errorf("web config mount = %v", m)
	}
	requireProbeScheme(t, "tls", ad, "HTTPS")
	requireProbeScheme(t, "tls=false", adapterOf(t, "exporter.webConfig.secretName=rm-web", "exporter.webConfig.tls=false"), nil)
	requireTCPProbes(t, adapterOf(t, "exporter.webConfig.secretName=rm-web", "exporter.webConfig.basicAuth=true", "exporter.host=10.0.0.1"), "10.0.0.1", 9433)
	none := adapterOf(t)
	if mountAt(none, "/etc/resctrl-mon/web") != nil || strings.Contains(fmt.Sprint(get(none, "command")), "web.config") {
		t.Error("a web config without exporter.webConfig.secretName")
	}
}

// The PodMonitor scrapes the adapter's port in mode nri, with every setting of the
// exporter's endpoint; mode hooks has only the exporter's.
func TestChartPodMonitorAdapter(t *testing.T) {
	t.Parallel()
	set := []string{"exporter.podMonitor.enabled=true", "exporter.webConfig.secretName=rm-web",
		"exporter.podMonitor.interval=1m", "exporter.podMonitor.scrapeTimeout=20s",
		"exporter.podMonitor.tlsConfig.serverName=resctrl-mon.monitoring",
		"exporter.podMonitor.basicAuth.username.name=rm-auth", "exporter.podMonitor.basicAuth.username.key=user",
		"exporter.podMonitor.basicAuth.password.name=rm-auth", "exporter.podMonitor.basicAuth.password.key=password",
		"exporter.podMonitor.relabelings[0].targetLabel=cluster", "exporter.podMonitor.relabelings[0].replacement=eu-1",
		"exporter.podMonitor.metricRelabelings[0].sourceLabels[0]=__name__", "exporter.podMonitor.metricRelabelings[0].action=drop",
		"exporter.podMonitor.metricRelabelings[0].regex=go_.*"}
	eps := list(render(t, set...)["PodMonitor/rm-resctrl-mon"], "spec", "podMetricsEndpoints")
	if len(eps) != 2 || get(eps[0], "port") != "metrics" || get(eps[1], "port") != "nri-metrics" {
		t.Fatalf("endpoints %v, want metrics and nri-metrics", eps)
	}
	// Everything but the port is the exporter's.
	ex, ad := eps[0].(map[string]any), eps[1].(map[string]any)
	for k, v := range ex {
		if k != "port" && fmt.Sprint(ad[k]) != fmt.Sprint(v) {
			t.Errorf("nri-metrics %s = %v, want the exporter's %v", k, ad[k], v)
		}
	}
	if len(ad) != len(ex) || get(ad, "scheme") != "https" || get(ad, "honorLabels") != true {
		t.Errorf("nri-metrics endpoint %v, want the exporter's settings (%v)", ad, ex)
	}
	hooks := list(render(t, append(set, "mode=hooks")...)["PodMonitor/rm-resctrl-mon"], "spec", "podMetricsEndpoints")
	if len(hooks) != 1 || get(hooks[0], "port") != "metrics" {
		t.Errorf("mode hooks: endpoints %v, want only metrics", hooks)
	}
}

// A misspelt or misplaced key of nri.health is refused by the schema, naming it, and so is
// a port the exporter has already.
func TestChartAdapterHealthBadValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ set, want string }{
		{"nri.health.prot=9500", "prot"},
		{"nri.health.port=0", "port"},
		{"nri.health.port=70000", "port"},
		{"nri.health.port=9432", "nri.health.port 9432: the exporter's port too"},
		{"nri.health.stuckAfter=1 minute", "stuckAfter"},
		{"nri.health.stuckAfter=60", "stuckAfter"},
		{"nri.health.livenessProbe.period=5", "period"},
		{"nri.health.livenessProbe.periodSeconds=0", "periodSeconds"},
		{"nri.health.livenessProbe.httpGet.path=/", "httpGet"},
		{"nri.health.readinessProbe.failureThreshold=-1", "failureThreshold"},
		{"nri.healthPort=9500", "healthPort"},
	} {
		_, err := helm(t, "template", "rm", chartDir(t), "--set", tc.set)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: %v, want an error naming %s", tc.set, err, tc.want)
		}
	}
	// Mode hooks has no adapter: its port cannot collide.
	if _, err := helm(t, "template", "rm", chartDir(t), "--set", "mode=hooks", "--set", "nri.health.port=9432"); err != nil {
		t.Errorf("mode hooks, nri.health.port=9432: %v", err)
	}
}
