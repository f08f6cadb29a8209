package k8s

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
)

// obj is one rendered Kubernetes object, as YAML decodes it.
type obj = map[string]any

// helm runs the cached helm with args; the output, and an error carrying stderr.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin := filepath.Join(cached(t, "helm"), "helm")
	cmd := exec.Command(bin, args...)
	cmd.Env = helmEnv(t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// render is `helm template` of the chart with --set pairs, decoded by kind/name.
func render(t *testing.T, set ...string) map[string]obj {
	t.Helper()
	return renderAs(t, "rm", "monitoring", set...)
}

// renderAs is render of a release of that name in that namespace.
func renderAs(t *testing.T, release, namespace string, set ...string) map[string]obj {
	t.Helper()
	args := []string{"template", release, chartDir(t), "--namespace", namespace}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return renderArgs(t, args...)
}

// renderArgs is `helm template` with these arguments, decoded by kind/name.
func renderArgs(t *testing.T, args ...string) map[string]obj {
	t.Helper()
	out, err := helm(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]obj{}
	dec := yaml.NewDecoder(strings.NewReader(out))
	for {
		var o obj
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("rendered YAML: %v\n%s", err, out)
		}
		if o == nil {
			continue
		}
		objs[fmt.Sprintf("%s/%s", o["kind"], get(o, "metadata", "name"))] = o
	}
	return objs
}

// get walks maps by key and lists by index ("0").
func get(o any, path ...string) any {
	for _, p := range path {
		switch v := o.(type) {
		case map[string]any:
			o = v[p]
		case []any:
			var i int
			if _, err := fmt.Sscan(p, &i); err != nil || i >= len(v) {
				return nil
			}
			o = v[i]
		default:
			return nil
		}
	}
	return o
}

func list(o any, path ...string) []any {
	l, _ := get(o, path...).([]any)
	return l
}

func TestChartLint(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"nri", "hooks"} {
		if out, err := helm(t, "lint", "--strict", chartDir(t), "--set", "mode="+mode); err != nil {
			t.Errorf("mode %s: %v\n%s", mode, err, out)
		}
	}
}

// Every container of every mode runs with what the docs say and nothing more: not
// privileged, no capability, no privilege escalation, a read-only root, the runtime's default
// seccomp profile; the pod sees the host's processes and is node-critical on every node.
func TestChartPrivileges(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"nri", "hooks"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			ds := render(t, "mode="+mode)["DaemonSet/rm-resctrl-mon"]
			if ds == nil {
				t.Fatal("no DaemonSet rm-resctrl-mon rendered")
			}
			spec := get(ds, "spec", "template", "spec")
			for key, want := range map[string]any{"hostPID": true, "hostNetwork": true, "priorityClassName": "system-node-critical"} {
				if got := get(spec, key); got != want {
					t.Errorf("%s = %v, want %v", key, got, want)
				}
			}
			if tol := list(spec, "tolerations"); len(tol) != 1 || get(tol[0], "operator") != "Exists" || get(tol[0], "key") != nil {
				t.Errorf("tolerations = %v, want one that tolerates every taint", tol)
			}
			// Tolerating every taint, the pods must still keep off nodes they cannot run on:
			// not Linux, no RDT monitoring (TestChartNodeSelection).
			if sel := get(spec, "nodeSelector"); fmt.Sprint(sel) != "map["+rdtLabel+":true kubernetes.io/os:linux]" {
				t.Errorf("nodeSelector = %v, want kubernetes.io/os: linux and %s: true", sel, rdtLabel)
			}
			// The service account's rights and token: events_chart_test.go.
			containers := append(list(spec, "initContainers"), list(spec, "containers")...)
			if len(containers) == 0 {
				t.Fatal("no containers")
			}
			for _, c := range containers {
				name := get(c, "name")
				sc := get(c, "securityContext")
				for key, want := range map[string]any{"privileged": false, "allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "runAsUser": 0} {
					if got := get(sc, key); got != want {
						t.Errorf("%s: securityContext.%s = %v, want %v", name, key, got, want)
					}
				}
				if got := get(sc, "seccompProfile", "type"); got != "RuntimeDefault" {
					t.Errorf("%s: seccompProfile = %v, want RuntimeDefault", name, got)
				}
				if drop := list(sc, "capabilities", "drop"); len(drop) != 1 || drop[0] != "ALL" {
					t.Errorf("%s: capabilities.drop = %v, want [ALL]", name, drop)
				}
				if add := get(sc, "capabilities", "add"); add != nil {
					t.Errorf("%s: capabilities.add = %v, want none", name, add)
				}
			}
		})
	}
}

// names lists the values of key in a list of objects.
func names(l []any, key string) []string {
	var out []string
	for _, o := range l {
		out = append(out, fmt.Sprint(get(o, key)))
	}
	return out
}

func container(spec any, field, name string) any {
	for _, c := range list(spec, field) {
		if get(c, "name") == name {
			return c
		}
	}
	return nil
}

func mountAt(c any, path string) any {
	for _, m := range list(c, "volumeMounts") {
		if get(m, "mountPath") == path {
			return m
		}
	}
	return nil
}

// What each mode runs and mounts: nri the adapter on the runtime's socket and nothing of the
// hooks; hooks the installer and reconcile, with the host's hook paths; both the exporter in a
// container of its own. resctrl is mounted at /host + the node's path (AppArmor: see
// apparmor_chart_test.go).
func TestChartModes(t *testing.T) {
	t.Parallel()
	nri := get(render(t, "mode=nri", "nri.socket=/run/x/nri.sock")["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
	if got := names(list(nri, "containers"), "name"); !slices.Equal(got, []string{"exporter", "nri-adapter"}) {
		t.Errorf("nri containers = %v", got)
	}
	if l := list(nri, "initContainers"); l != nil {
		t.Errorf("nri init containers = %v, want none", names(l, "name"))
	}
	ad := container(nri, "containers", "nri-adapter")
	cmd := fmt.Sprint(get(ad, "command"))
	for _, want := range []string{"resctrl-mon-nri", "--nri-socket=/run/x/nri.sock", "--config=/etc/resctrl-mon/config.yaml"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("nri-adapter command %s lacks %s", cmd, want)
		}
	}
	// The adapter serves no node metrics (the exporter's, whose scrape reads every group):
	// only its own few, and its probes, on a port of its own (TestChartAdapterHealth).
	for _, no := range []string{"--listen", "--web.config.file", "--pressure-averages"} {
		if strings.Contains(cmd, " "+no) {
			t.Errorf("nri-adapter command %s has %s", cmd, no)
		}
	}
	if p := fmt.Sprint(get(ad, "ports")); p != "[map[containerPort:9433 name:nri-metrics protocol:TCP]]" {
		t.Errorf("nri-adapter ports = %v, want only nri-metrics", p)
	}
	for _, p := range []string{"/run/x", "/host/sys/fs/resctrl", "/run/resctrl-mon", "/host/sys/fs/cgroup"} {
		if mountAt(ad, p) == nil {
			t.Errorf("nri-adapter does not mount %s", p)
		}
	}
	if mountAt(ad, "/sys/fs/resctrl") != nil {
		t.Error("nri-adapter mounts resctrl at /sys/fs/resctrl, which the runtimes' AppArmor profiles deny writing")
	}
	if m := mountAt(ad, "/host/sys/fs/cgroup"); get(m, "readOnly") != true {
		t.Errorf("the cgroup tree is mounted writable: %v", m)
	}

	hooks := get(render(t, "mode=hooks", "hooks.hooksDir=/etc/containers/oci/hooks.d", "hooks.timeout=15")["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
	if got := names(list(hooks, "containers"), "name"); !slices.Equal(got, []string{"exporter", "reconcile"}) {
		t.Errorf("hooks containers = %v", got)
	}
	in := container(hooks, "initContainers", "install-hooks")
	icmd := fmt.Sprint(get(in, "command"))
	for _, want := range []string{"host install", "--host-root=/host", "--hooks-dir=/etc/containers/oci/hooks.d", "--timeout=15"} {
		if !strings.Contains(icmd, want) {
			t.Errorf("install-hooks command %s lacks %s", icmd, want)
		}
	}
	if mountAt(in, "/host/etc/containers/oci/hooks.d") == nil {
		t.Error("install-hooks does not mount the host's hooks dir")
	}
	rec := container(hooks, "containers", "reconcile")
	for _, p := range []string{"/run/runc", "/run/containerd/runc", "/run/crun"} {
		if m := mountAt(rec, p); m == nil || get(m, "readOnly") != true {
			t.Errorf("reconcile mounts runtime root %s as %v, want read-only", p, m)
		}
	}
	if c := container(hooks, "containers", "nri-adapter"); c != nil {
		t.Error("hooks mode runs the NRI adapter")
	}
	// kubectl logs and exec without -c go to the container that places.
	for mode, want := range map[string]string{"nri": "nri-adapter", "hooks": "reconcile"} {
		ann := get(render(t, "mode="+mode)["DaemonSet/rm-resctrl-mon"], "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/default-container")
		if ann != want {
			t.Errorf("%s: default container %v, want %s", mode, ann, want)
		}
	}
	// The exporter is the same in both modes, and writes nothing.
	for mode, spec := range map[string]any{"nri": nri, "hooks": hooks} {
		ex := container(spec, "containers", "exporter")
		if got := fmt.Sprint(get(ex, "command")); !strings.Contains(got, "resctrl-mon --config=/etc/resctrl-mon/config.yaml serve ") ||
			!strings.HasSuffix(got, " --listen=[$(HOST_IP)]:9432]") {
			t.Errorf("%s: exporter command = %s", mode, got)
		}
		for _, m := range list(ex, "volumeMounts") {
			if get(m, "readOnly") != true {
				t.Errorf("%s: the exporter mounts %v writable", mode, get(m, "mountPath"))
			}
		}
		if mountAt(ex, "/host/sys/fs/resctrl") == nil || mountAt(ex, "/run/resctrl-mon") == nil {
			t.Errorf("%s: the exporter does not mount resctrl and the state dir", mode)
		}
	}
}

// No long-running container stops the node's pods from being placed or cleaned up behind the
// chart's back: none has a preStop (only a Helm uninstall takes things away), and only the
// init container that installs mounts the host directories the runtime executes from.
func TestChartLongRunningContainers(t *testing.T) {
	t.Parallel()
	for _, set := range [][]string{{"mode=nri"}, {"mode=hooks"}, {"mode=nri", "wrapper.enabled=true"}, {"mode=hooks", "wrapper.enabled=true"}} {
		spec := get(render(t, set...)["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
		for _, c := range append(list(spec, "initContainers"), list(spec, "containers")...) {
			name := get(c, "name")
			if l := get(c, "lifecycle"); l != nil {
				t.Errorf("%v: %s has lifecycle %v", set, name, l)
			}
			if name == "install-hooks" {
				continue
			}
			for _, m := range list(c, "volumeMounts") {
				if v := fmt.Sprint(get(m, "name")); strings.HasPrefix(v, "host-") {
					t.Errorf("%v: %s mounts %s (%v)", set, name, v, get(m, "mountPath"))
				}
			}
		}
		if strings.Contains(set[0], "hooks") || len(set) > 1 {
			if in := container(spec, "initContainers", "install-hooks"); in == nil || mountAt(in, "/host/usr/local/libexec/oci/hooks.d") == nil {
				t.Errorf("%v: install-hooks does not mount the hook's directory", set)
			}
		}
	}
}

// The chart's config is resctrl-mon's: every key, each with the binaries' default (but the
// log, which goes to the pod's stderr, and the admin-gated annotations, which no pod's author
// is believed on until the admin lists a namespace), read by the same strict parser the
// binaries use.
func TestChartConfig(t *testing.T) {
	t.Parallel()
	objs := render(t, "mode=hooks")
	cm := releaseConfig(t, objs)
	got, err := config.Parse(strings.NewReader(fmt.Sprint(get(cm, "data", "config.yaml"))))
	if err != nil {
		t.Fatalf("config.yaml from the chart: %v", err)
	}
	want := config.Default()
	want.Log = "stderr"
	want.ResctrlRoot = "/host/sys/fs/resctrl"
	want.Annotations.OptOutNamespaces, want.MBMAssignmentNamespaces = []string{}, []string{}
	// The chart's events.enabled (TestChartEvents): on in a pod, whose service account
	// the chart gives the right; off for a serve outside one.
	want.Events.Enabled = true
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("chart config:\n %+v\nwant the defaults but log: stderr, resctrl where the pod mounts it, no namespace's annotations honoured and events enabled:\n %+v", got, want)
	}
	for _, ns := range []string{"default", "kube-system", ""} {
		if config.Honoured(got.Annotations.OptOutNamespaces, ns) || config.Honoured(got.MBMAssignmentNamespaces, ns) {
			t.Errorf("the chart's default config honours a pod-set annotation in namespace %q", ns)
		}
	}
	// An explicit list opts in.
	listed := releaseConfig(t, render(t, "config.annotations.optOutNamespaces={infra}", "config.mbmAssignmentNamespaces={*}"))
	if c, err := config.Parse(strings.NewReader(fmt.Sprint(get(listed, "data", "config.yaml")))); err != nil ||
		!config.Honoured(c.Annotations.OptOutNamespaces, "infra") || config.Honoured(c.Annotations.OptOutNamespaces, "shop") ||
		!config.Honoured(c.MBMAssignmentNamespaces, "shop") {
		t.Errorf("config with optOutNamespaces={infra}, mbmAssignmentNamespaces={*}: %+v, %v", c.Annotations, err)
	}
	var values struct {
		Config map[string]any `yaml:"config"`
	}
	b, err := os.ReadFile(filepath.Join(chartDir(t), "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	for _, k := range config.Keys() {
		if _, ok := values.Config[k]; !ok {
			t.Errorf("values.yaml config has no key %s", k)
		}
	}
	hook, err := config.Parse(strings.NewReader(fmt.Sprint(get(cm, "data", "hook-config.yaml"))))
	if err != nil {
		t.Fatalf("hook-config.yaml: %v", err)
	}
	if hook.Log != "syslog" || hook.StateDir != want.StateDir || hook.ResctrlRoot != "/sys/fs/resctrl" {
		t.Errorf("hook config log=%s stateDir=%s resctrlRoot=%s, want syslog and the node's paths", hook.Log, hook.StateDir, hook.ResctrlRoot)
	}
	// A value set through helm reaches the config.
	set := releaseConfig(t, render(t, "config.failurePolicy=closed", "config.retention=90s"))
	c, err := config.Parse(strings.NewReader(fmt.Sprint(get(set, "data", "config.yaml"))))
	if err != nil || c.FailurePolicy != config.FailClosed || c.Retention.String() != "1m30s" {
		t.Errorf("config after --set: %+v, %v", c, err)
	}
}

// Bad values are refused by name, before anything reaches a node.
func TestChartBadValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ set, want string }{
		{"mode=privileged", "mode"},
		{"config.retention=5", "retention"},
		{"config.failurePolicy=sometimes", "failurePolicy"},
		{"config.noSuchKey=1", "noSuchKey"},
		{"hooks.timeout=1", "timeout"},
		{"exporter.port=0", "port"},
		{"config.runtimeRoots[0]=/run/x/*/y", "runtimeRoots"},
		{"exporter.listen=:9432", "listen"},
		{"exporter.host=a b", "host"},
		{"appArmorProfile.type=Localhost", "localhostProfile"},
		{"appArmorProfile.type=Bogus", "type"},
		{"seLinuxOptions.kind=spc_t", "kind"},
		{"resources.adapter=1", "adapter"},
		{"image.digest=abc123", "digest"},
		{"image.digest=sha256:" + strings.Repeat("A", 64), "digest"},
		{"imagePullSecrets[0].secret=regcred", "secret"},
	} {
		_, err := helm(t, "template", "rm", chartDir(t), "--set", "mode=hooks", "--set", tc.set)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: %v, want an error naming %s", tc.set, err, tc.want)
		}
	}
}

// The optional objects: a PodMonitor on the metrics port, the dashboard (the one in
// install/grafana) as a ConfigMap, scrape annotations that can be turned off.
func TestChartOptional(t *testing.T) {
	t.Parallel()
	def := render(t)
	if def["PodMonitor/rm-resctrl-mon"] != nil || def["ConfigMap/rm-resctrl-mon-dashboard"] != nil {
		t.Error("PodMonitor or dashboard rendered by default")
	}
	ann := get(def["DaemonSet/rm-resctrl-mon"], "spec", "template", "metadata", "annotations")
	if get(ann, "prometheus.io/scrape") != "true" || get(ann, "prometheus.io/port") != "9432" {
		t.Errorf("scrape annotations = %v", ann)
	}
	all := render(t, "exporter.podMonitor.enabled=true", "dashboard.enabled=true", "exporter.scrapeAnnotations=false", "exporter.port=9500", "exporter.host=127.0.0.1")
	pm := all["PodMonitor/rm-resctrl-mon"]
	if get(pm, "spec", "podMetricsEndpoints", "0", "port") != "metrics" {
		t.Errorf("PodMonitor = %v", pm)
	}
	ds := all["DaemonSet/rm-resctrl-mon"]
	if get(ds, "spec", "template", "metadata", "annotations", "prometheus.io/scrape") != nil {
		t.Error("scrape annotations with exporter.scrapeAnnotations=false")
	}
	if p := get(ds, "spec", "template", "spec", "containers", "0", "ports", "0", "containerPort"); p != 9500 {
		t.Errorf("metrics port = %v, want 9500", p)
	}
	// The probe asks where the exporter listens.
	if h := get(ds, "spec", "template", "spec", "containers", "0", "readinessProbe", "httpGet", "host"); h != "127.0.0.1" {
		t.Errorf("readiness probe host = %v, want 127.0.0.1 (exporter.host)", h)
	}
	dash := fmt.Sprint(get(all["ConfigMap/rm-resctrl-mon-dashboard"], "data", "resctrl-mon.json"))
	want, err := os.ReadFile(filepath.Join(repoRoot(t), "install", "grafana", "resctrl-mon.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(dash) != strings.TrimSpace(string(want)) {
		t.Error("the dashboard ConfigMap is not install/grafana/resctrl-mon.json")
	}
}

// wrapper.enabled: the wrapper and the hook it lists go on the node in either mode (an NRI
// node gets no hooks.d JSON), and a RuntimeClass names the runtime's handler.
func TestChartWrapper(t *testing.T) {
	t.Parallel()
	objs := render(t, "mode=nri", "wrapper.enabled=true", "wrapper.path=/opt/rm/bin/resctrl-mon-runtime", "wrapper.handler=rmw")
	rc := objs["RuntimeClass/resctrl-mon"]
	if get(rc, "handler") != "rmw" {
		t.Errorf("RuntimeClass = %v, want handler rmw", rc)
	}
	spec := get(objs["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
	in := container(spec, "initContainers", "install-hooks")
	cmd := fmt.Sprint(get(in, "command"))
	for _, want := range []string{"host install", "--wrapper-path=/opt/rm/bin/resctrl-mon-runtime", "--no-registrations"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("install-hooks command %s lacks %s", cmd, want)
		}
	}
	for _, p := range []string{"/host/opt/rm/bin", "/host/usr/local/libexec/oci/hooks.d", "/host/etc/resctrl-mon"} {
		if mountAt(in, p) == nil {
			t.Errorf("install-hooks does not mount %s", p)
		}
	}
	// Where install-hooks checks the runtime the wrapper runs (config.runtime) and looks for
	// the node's runc or crun: read-only.
	for _, p := range []string{"/host/usr/sbin", "/host/usr/bin"} {
		if m := mountAt(in, p); m == nil || get(m, "readOnly") != true {
			t.Errorf("install-hooks mounts %s as %v, want read-only", p, m)
		}
	}
	hook, err := config.Parse(strings.NewReader(fmt.Sprint(get(releaseConfig(t, objs), "data", "hook-config.yaml"))))
	if err != nil || hook.RuntimeHook != "/usr/local/libexec/oci/hooks.d/resctrl-mon-hook" {
		t.Errorf("the wrapper's config: runtimeHook %q, %v; want hooks.hookPath", hook.RuntimeHook, err)
	}
	if objs := render(t, "mode=nri"); objs["RuntimeClass/resctrl-mon"] != nil || list(get(objs["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec"), "initContainers") != nil {
		t.Error("without wrapper.enabled an NRI node gets a RuntimeClass or an init container")
	}
}

// A private registry: every pod the chart makes (the DaemonSet's, the cleanup's) pulls with
// the secrets named, and runs the image pinned by digest when one is given (the tag then
// unused), by its tag otherwise.
func TestChartImage(t *testing.T) {
	t.Parallel()
	digest := "sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		set  []string
		want string
	}{
		{nil, "localhost/resctrl-mon:"},
		{[]string{"image.tag=9.9.9"}, "localhost/resctrl-mon:9.9.9"},
		{[]string{"image.digest=" + digest, "image.tag=9.9.9"}, "localhost/resctrl-mon@" + digest},
	} {
		set := append([]string{"mode=hooks", "imagePullSecrets[0].name=regcred", "uninstall.enabled=true"}, tc.set...)
		objs := render(t, set...)
		pods := 0
		for name, o := range objs {
			spec, ok := get(o, "spec", "template", "spec").(map[string]any)
			if !ok {
				continue
			}
			pods++
			if secrets := fmt.Sprint(spec["imagePullSecrets"]); secrets != "[map[name:regcred]]" {
				t.Errorf("%v: %s pulls with %s, want regcred", tc.set, name, secrets)
			}
			for _, key := range []string{"initContainers", "containers"} {
				cs, _ := spec[key].([]any)
				for _, c := range cs {
					img := fmt.Sprint(c.(map[string]any)["image"])
					if !strings.HasPrefix(img, tc.want) || (tc.want == "localhost/resctrl-mon:" && len(img) == len(tc.want)) {
						t.Errorf("%v: %s runs %s, want %s…", tc.set, name, img, tc.want)
					}
				}
			}
		}
		if pods < 2 {
			t.Errorf("%v: %d pod templates rendered, want the DaemonSet's and the cleanup's", tc.set, pods)
		}
	}
}
