package k8s

import (
	"fmt"
	"strings"
	"testing"
)

func exporterOf(t *testing.T, set ...string) any {
	t.Helper()
	spec := get(render(t, set...)["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
	c := container(spec, "containers", "exporter")
	if c == nil {
		t.Fatalf("%v: no exporter container", set)
	}
	return c
}

// One value for the port, one for the address: --listen, the container port, the scrape
// annotation and both probes follow them. The default address is the node's, from the
// downward API (kubelet expands $(HOST_IP) in args), bracketed so an IPv6 node works too.
func TestChartExporterAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		set       []string
		listen    string
		probeHost any // nil: none named (the pod's address, which is the node's)
		env       bool
	}{
		{nil, "--listen=[$(HOST_IP)]:9432", nil, true},
		{[]string{"exporter.port=9500"}, "--listen=[$(HOST_IP)]:9500", nil, true},
		{[]string{"exporter.host=127.0.0.1", "exporter.port=19532"}, "--listen=[127.0.0.1]:19532", "127.0.0.1", false},
		{[]string{"exporter.host=0.0.0.0"}, "--listen=[0.0.0.0]:9432", nil, false},
		{[]string{"exporter.host=fd00::1"}, "--listen=[fd00::1]:9432", "fd00::1", false},
		{[]string{"exporter.host=[fd00::1]"}, "--listen=[fd00::1]:9432", "fd00::1", false},
	} {
		for _, mode := range []string{"nri", "hooks"} {
			set := append([]string{"mode=" + mode}, tc.set...)
			ex := exporterOf(t, set...)
			if cmd := list(ex, "command"); fmt.Sprint(cmd[len(cmd)-1]) != tc.listen {
				t.Errorf("%v: exporter command %v, want it to end with %s", set, cmd, tc.listen)
			}
			env := fmt.Sprint(get(ex, "env"))
			if has := strings.Contains(env, "HOST_IP") && strings.Contains(env, "status.hostIP"); has != tc.env {
				t.Errorf("%v: env %s, want HOST_IP from status.hostIP: %t", set, env, tc.env)
			}
			port := tc.listen[strings.LastIndex(tc.listen, ":")+1:]
			if p := fmt.Sprint(get(ex, "ports", "0", "containerPort")); p != port || get(ex, "ports", "0", "name") != "metrics" {
				t.Errorf("%v: ports %v, want metrics on %s", set, get(ex, "ports"), port)
			}
			// Ready when healthy; alive when the server answers at all (a restart would not
			// mount resctrl).
			for probe, path := range map[string]string{"readinessProbe": "/healthz", "livenessProbe": "/"} {
				h := get(ex, probe, "httpGet")
				if get(h, "path") != path || fmt.Sprint(get(h, "port")) != port || get(h, "host") != tc.probeHost || get(h, "scheme") != nil {
					t.Errorf("%v: %s %v, want %s on port %s, host %v, HTTP", set, probe, get(ex, probe), path, port, tc.probeHost)
				}
			}
		}
	}
}

// TLS and basic auth come from a Secret holding exporter-toolkit's web config, mounted
// read-only; the probes ask over HTTPS, or only knock on the port when basic auth would
// refuse them.
func TestChartExporterWebConfig(t *testing.T) {
	t.Parallel()
	objs := render(t, "exporter.webConfig.secretName=rm-web")
	spec := get(objs["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
	ex := container(spec, "containers", "exporter")
	if cmd := fmt.Sprint(get(ex, "command")); !strings.Contains(cmd, "--web.config.file=/etc/resctrl-mon/web/web-config.yml") {
		t.Errorf("exporter command %s lacks the web config", cmd)
	}
	if m := mountAt(ex, "/etc/resctrl-mon/web"); m == nil || get(m, "readOnly") != true || get(m, "name") != "web-config" {
		t.Errorf("web config mount = %v", m)
	}
	var found bool
	for _, v := range list(spec, "volumes") {
		if get(v, "name") == "web-config" {
			found = get(v, "secret", "secretName") == "rm-web"
		}
	}
	if !found {
		t.Errorf("no web-config volume from Secret rm-web: %v", list(spec, "volumes"))
	}
	requireProbeScheme(t, "tls", ex, "HTTPS")
	if s := get(objs["DaemonSet/rm-resctrl-mon"], "spec", "template", "metadata", "annotations", "prometheus.io/scheme"); s != "https" {
		t.Errorf("prometheus.io/scheme = %v, want https", s)
	}
	// The adapter serves its own port with the same web config (TestChartAdapterHealth).
	if ad := container(spec, "containers", "nri-adapter"); mountAt(ad, "/etc/resctrl-mon/web") == nil {
		t.Error("the adapter does not mount the web config")
	}
	requireTCPProbes(t, exporterOf(t, "exporter.webConfig.secretName=rm-web", "exporter.webConfig.basicAuth=true", "exporter.host=10.0.0.1"), "10.0.0.1", 9432)
	plain := exporterOf(t)
	if mountAt(plain, "/etc/resctrl-mon/web") != nil || strings.Contains(fmt.Sprint(get(plain, "command")), "web.config") {
		t.Error("a web config without exporter.webConfig.secretName")
	}
}

// requireProbeScheme: both probes of container c ask over scheme (nil: HTTP, the default).
func requireProbeScheme(t *testing.T, what string, c any, scheme any) {
	t.Helper()
	for _, probe := range []string{"readinessProbe", "livenessProbe"} {
		if s := get(c, probe, "httpGet", "scheme"); s != scheme {
			t.Errorf("%s: %s scheme = %v, want %v", what, probe, s, scheme)
		}
	}
}

// requireTCPProbes: both probes of container c only check that host:port takes connections
// (kubelet's probes cannot send basic auth).
func requireTCPProbes(t *testing.T, c any, host string, port int) {
	t.Helper()
	want := fmt.Sprintf("map[host:%s port:%d]", host, port)
	for _, probe := range []string{"readinessProbe", "livenessProbe"} {
		if get(c, probe, "httpGet") != nil || fmt.Sprint(get(c, probe, "tcpSocket")) != want {
			t.Errorf("with basic auth, %s = %v, want a TCP check of %s:%d", probe, get(c, probe), host, port)
		}
	}
}

// Each container has resources of its own.
func TestChartResources(t *testing.T) {
	t.Parallel()
	objs := render(t, "mode=hooks", "wrapper.enabled=true", "resources.exporter.limits.memory=200Mi", "resources.reconcile.limits.memory=100Mi", "resources.install.limits.memory=64Mi")
	spec := get(objs["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
	for name, want := range map[string]string{"exporter": "200Mi", "reconcile": "100Mi", "install-hooks": "64Mi"} {
		c := container(spec, "containers", name)
		if c == nil {
			c = container(spec, "initContainers", name)
		}
		if got := get(c, "resources", "limits", "memory"); got != want {
			t.Errorf("%s: memory limit %v, want %s", name, got, want)
		}
	}
	nri := get(render(t, "resources.adapter.limits.memory=300Mi")["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
	if got := get(container(nri, "containers", "nri-adapter"), "resources", "limits", "memory"); got != "300Mi" {
		t.Errorf("nri-adapter: memory limit %v, want 300Mi", got)
	}
	if got := get(container(nri, "containers", "exporter"), "resources", "limits", "memory"); got != "128Mi" {
		t.Errorf("exporter: memory limit %v, want the default 128Mi", got)
	}
}
