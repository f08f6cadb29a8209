package k8s

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// The objects of the uninstall cleanup, by kind/name (templates/cleanup-*.yaml).
var cleanupObjects = []string{
	"ServiceAccount/rm-resctrl-mon-cleanup",
	"Role/rm-resctrl-mon-cleanup",
	"RoleBinding/rm-resctrl-mon-cleanup",
	"Role/rm-resctrl-mon-cleanup-events",
	"RoleBinding/rm-resctrl-mon-cleanup-events",
	"ConfigMap/rm-resctrl-mon-cleanup",
	"DaemonSet/rm-resctrl-mon-cleanup",
	"Job/rm-resctrl-mon-cleanup",
}

// chartCases are the four shapes of the chart: each mode, with and without the wrapper.
var chartCases = []struct {
	name string
	set  []string
}{
	{"nri", []string{"mode=nri"}},
	{"nri+wrapper", []string{"mode=nri", "wrapper.enabled=true"}},
	{"hooks", []string{"mode=hooks"}},
	{"hooks+wrapper", []string{"mode=hooks", "wrapper.enabled=true"}},
}

// Every cleanup object is a post-delete hook and nothing else (no pre/post-upgrade, no
// install): it runs on `helm uninstall` only, never on a restart, an eviction, a force
// delete, a drain or an upgrade. Made in order (RBAC and config, the DaemonSet, the Job Helm
// waits for) and gone once it succeeded; kept when it failed, for its logs.
func TestCleanupHooks(t *testing.T) {
	t.Parallel()
	for _, tc := range chartCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			objs := render(t, tc.set...)
			weights := map[string]string{}
			for _, key := range cleanupObjects {
				o := objs[key]
				if o == nil {
					t.Errorf("%s not rendered", key)
					continue
				}
				ann := get(o, "metadata", "annotations")
				if got := get(ann, "helm.sh/hook"); got != "post-delete" {
					t.Errorf("%s: helm.sh/hook = %v, want post-delete only", key, got)
				}
				if got := fmt.Sprint(get(ann, "helm.sh/hook-delete-policy")); got != "before-hook-creation,hook-succeeded" {
					t.Errorf("%s: hook-delete-policy = %s", key, got)
				}
				weights[key] = fmt.Sprint(get(ann, "helm.sh/hook-weight"))
			}
			if w := weights; w["ServiceAccount/rm-resctrl-mon-cleanup"] != "-10" || w["ConfigMap/rm-resctrl-mon-cleanup"] != "-10" ||
				w["DaemonSet/rm-resctrl-mon-cleanup"] != "-5" || w["Job/rm-resctrl-mon-cleanup"] != "0" {
				t.Errorf("hook weights %v: want RBAC and config (-10), then the DaemonSet (-5), then the Job (0)", w)
			}
			// Nothing of the release itself is a hook: the DaemonSet's pods are no cleanup.
			for key, o := range objs {
				if !slices.Contains(cleanupObjects, key) && get(o, "metadata", "annotations", "helm.sh/hook") != nil {
					t.Errorf("%s is a hook", key)
				}
			}
			if got := get(objs["Role/rm-resctrl-mon-cleanup-events"], "metadata", "namespace"); got != "default" {
				t.Errorf("the events Role is in %v, want default (where the API server keeps a Node's Events)", got)
			}
			// The cleanup has the release's config, whose own ConfigMap is gone by then.
			if a, b := get(objs["ConfigMap/rm-resctrl-mon-cleanup"], "data"), get(releaseConfig(t, objs), "data"); fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("cleanup config %v, want the release's %v", a, b)
			}
		})
	}
}

// hostPaths maps a pod spec's volume names to their hostPath.
func hostPaths(spec any) map[string]string {
	out := map[string]string{}
	for _, v := range list(spec, "volumes") {
		if p := get(v, "hostPath", "path"); p != nil {
			out[fmt.Sprint(get(v, "name"))] = fmt.Sprint(p)
		}
	}
	return out
}

// flagValues maps each --flag=value of a command to its values.
func flagValues(c any) map[string][]string {
	out := map[string][]string{}
	for _, a := range list(c, "command") {
		k, v, _ := strings.Cut(fmt.Sprint(a), "=")
		if strings.HasPrefix(k, "--") {
			out[k] = append(out[k], v)
		}
	}
	return out
}

// The cleanup takes off what install-hooks put on: the same host paths in its flags, and
// every host directory install-hooks mounts mounted at the same path from the same host
// directory; the runtimes' configs read-only; in mode nri without the wrapper, no file at all.
func TestCleanupMatchesInstall(t *testing.T) {
	t.Parallel()
	for _, tc := range chartCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			set := append(slices.Clone(tc.set), "hooks.hookPath=/opt/rm/libexec/resctrl-mon-hook", "hooks.configPath=/etc/rm/config.yaml",
				"wrapper.path=/opt/rm/bin/resctrl-mon-runtime", "hooks.hooksDir=/etc/containers/oci/hooks.d")
			objs := render(t, set...)
			main := get(objs["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
			spec := get(objs["DaemonSet/rm-resctrl-mon-cleanup"], "spec", "template", "spec")
			cl := container(spec, "initContainers", "cleanup")
			if cl == nil {
				t.Fatal("no cleanup init container")
			}
			cmd := fmt.Sprint(get(cl, "command"))
			for _, want := range []string{"host uninstall", "--release-groups", "--wait-placers=60s", "--event-node=$(NODE_NAME)"} {
				if !strings.Contains(cmd, want) {
					t.Errorf("cleanup command %s lacks %s", cmd, want)
				}
			}
			if get(spec, "hostPID") != true {
				t.Error("the cleanup cannot see the release's adapter or reconcile (no hostPID)")
			}
			in := container(main, "initContainers", "install-hooks")
			if tc.name == "nri" {
				if in != nil || !strings.Contains(cmd, "--no-files") || strings.Contains(cmd, "--host-root") {
					t.Errorf("mode nri without the wrapper: install-hooks %v, cleanup %s; want no files either way", in != nil, cmd)
				}
				for _, m := range list(cl, "volumeMounts") {
					if n := fmt.Sprint(get(m, "name")); strings.HasPrefix(n, "host-") || strings.HasPrefix(n, "runtime-config-") {
						t.Errorf("cleanup mounts %v with nothing to remove", get(m, "mountPath"))
					}
				}
				return
			}
			if in == nil {
				t.Fatal("no install-hooks")
			}
			got, want := flagValues(cl), flagValues(in)
			for _, f := range []string{"--host-root", "--hook-path", "--hooks-dir", "--config-path"} {
				if !slices.Equal(got[f], want[f]) || len(got[f]) != 1 {
					t.Errorf("cleanup %s = %q, install-hooks %q", f, got[f], want[f])
				}
			}
			if !slices.Equal(got["--runtime-config"], []string{"/etc/containerd/config.toml", "/etc/containerd/conf.d", "/etc/crio/crio.conf", "/etc/crio/crio.conf.d"}) {
				t.Errorf("--runtime-config = %q", got["--runtime-config"])
			}
			mainHost, cleanHost := hostPaths(main), hostPaths(spec)
			for _, m := range list(in, "volumeMounts") {
				path, vol := fmt.Sprint(get(m, "mountPath")), fmt.Sprint(get(m, "name"))
				// What install-hooks only reads (where it looks for the wrapper's runtime) the
				// cleanup does not touch.
				if !strings.HasPrefix(path, "/host/") || get(m, "readOnly") == true {
					continue
				}
				cm := mountAt(cl, path)
				if cm == nil {
					t.Errorf("cleanup does not mount %s (install-hooks does)", path)
					continue
				}
				if h := cleanHost[fmt.Sprint(get(cm, "name"))]; h != mainHost[vol] || get(cm, "readOnly") == true {
					t.Errorf("cleanup mounts %s from %s (read-only %v), install-hooks from %s", path, h, get(cm, "readOnly"), mainHost[vol])
				}
			}
			if m := mountAt(cl, "/host/etc"); m == nil || get(m, "readOnly") != true || cleanHost[fmt.Sprint(get(m, "name"))] != "/etc" {
				t.Errorf("the runtimes' configs: mount %v, want /etc read-only at /host/etc", m)
			}
			// resctrl and the state dir where the release's placing container has them.
			placer := container(main, "containers", "nri-adapter")
			if placer == nil {
				placer = container(main, "containers", "reconcile")
			}
			for _, name := range []string{"resctrl", "state"} {
				var want any
				for _, m := range list(placer, "volumeMounts") {
					if get(m, "name") == name {
						want = get(m, "mountPath")
					}
				}
				if m := mountAt(cl, fmt.Sprint(want)); want == nil || m == nil || get(m, "name") != name || get(m, "readOnly") == true {
					t.Errorf("cleanup mounts %s as %v, the release's placer at %v", name, m, want)
				}
			}
		})
	}
}

// The Job Helm waits for: no retry (a failure is an answer), its own pods outside the cleanup
// DaemonSet's selector, the DaemonSet named; the role reads that DaemonSet and the pods only.
func TestCleanupJob(t *testing.T) {
	t.Parallel()
	objs := render(t, "uninstall.timeoutSeconds=100", "kubernetesAPI=https://127.0.0.1:6443")
	job := objs["Job/rm-resctrl-mon-cleanup"]
	if got := get(job, "metadata", "annotations", "helm.sh/hook-output-log-policy"); got != "hook-failed" {
		t.Errorf("hook-output-log-policy = %v: helm would not print why the cleanup failed", got)
	}
	if get(job, "spec", "backoffLimit") != 0 || get(job, "spec", "activeDeadlineSeconds") != 160 ||
		get(job, "spec", "template", "spec", "restartPolicy") != "Never" {
		t.Errorf("job spec = %v", get(job, "spec"))
	}
	w := container(get(job, "spec", "template", "spec"), "containers", "wait")
	if got := flagValues(w); fmt.Sprint(got["--daemonset"]) != "[monitoring/rm-resctrl-mon-cleanup]" || fmt.Sprint(got["--timeout"]) != "[100s]" ||
		fmt.Sprint(got["--api-server"]) != "[https://127.0.0.1:6443]" {
		t.Errorf("wait flags = %v", got)
	}
	sel := get(objs["DaemonSet/rm-resctrl-mon-cleanup"], "spec", "selector", "matchLabels").(map[string]any)
	jobLabels := get(job, "spec", "template", "metadata", "labels").(map[string]any)
	matches := true
	for k, v := range sel {
		matches = matches && jobLabels[k] == v
	}
	if matches {
		t.Errorf("the Job's pod %v is selected by the cleanup DaemonSet's %v: the wait would count it", jobLabels, sel)
	}
	rules := fmt.Sprint(get(objs["Role/rm-resctrl-mon-cleanup"], "rules"))
	if !strings.Contains(rules, "resourceNames:[rm-resctrl-mon-cleanup]") || strings.Count(rules, "verbs") != 2 ||
		strings.Contains(rules, "delete") || strings.Contains(rules, "create") {
		t.Errorf("cleanup Role rules = %s", rules)
	}
	if ev := fmt.Sprint(get(objs["Role/rm-resctrl-mon-cleanup-events"], "rules")); ev != "[map[apiGroups:[] resources:[events] verbs:[create]]]" {
		t.Errorf("events Role rules = %s", ev)
	}
}

// The values: no events (no Role in "default"), other runtime configs (each top directory
// mounted once, read-only), none at all (an explicit empty check), off altogether; a config
// path with no directory above it is refused.
func TestCleanupValues(t *testing.T) {
	t.Parallel()
	objs := render(t, "mode=hooks", "uninstall.nodeEvents=false", "uninstall.runtimeConfigs={/var/lib/k0s/containerd.toml,/etc/crio/crio.conf,/etc/containerd/config.toml}")
	if objs["Role/rm-resctrl-mon-cleanup-events"] != nil {
		t.Error("events Role with uninstall.nodeEvents=false")
	}
	spec := get(objs["DaemonSet/rm-resctrl-mon-cleanup"], "spec", "template", "spec")
	cl := container(spec, "initContainers", "cleanup")
	if cmd := fmt.Sprint(get(cl, "command")); strings.Contains(cmd, "--event-node") {
		t.Errorf("cleanup posts events: %s", cmd)
	}
	if got := flagValues(cl)["--runtime-config"]; len(got) != 3 || got[0] != "/var/lib/k0s/containerd.toml" {
		t.Errorf("--runtime-config = %q", got)
	}
	hp := hostPaths(spec)
	var roots []string
	for _, m := range list(cl, "volumeMounts") {
		if n := fmt.Sprint(get(m, "name")); strings.HasPrefix(n, "runtime-config-") {
			roots = append(roots, hp[n])
			if get(m, "readOnly") != true || get(m, "mountPath") != "/host"+hp[n] {
				t.Errorf("runtime config mount %v", m)
			}
		}
	}
	if slices.Sort(roots); !slices.Equal(roots, []string{"/etc", "/var"}) {
		t.Errorf("runtime config roots %q, want /etc and /var once each", roots)
	}

	none := render(t, "mode=hooks", "uninstall.runtimeConfigs={}")
	if got := flagValues(container(get(none["DaemonSet/rm-resctrl-mon-cleanup"], "spec", "template", "spec"), "initContainers", "cleanup"))["--runtime-config"]; !slices.Equal(got, []string{""}) {
		t.Errorf("no runtime configs: --runtime-config = %q, want one empty (check none)", got)
	}
	off := render(t, "uninstall.enabled=false")
	if left := slices.DeleteFunc(slices.Collect(maps.Keys(off)), func(k string) bool { return !strings.Contains(k, "cleanup") }); len(left) != 0 {
		t.Errorf("uninstall.enabled=false renders %q", left)
	}
	if _, err := helm(t, "template", "rm", chartDir(t), "--set", "mode=hooks", "--set", "uninstall.runtimeConfigs={/crio.conf}"); err == nil || !strings.Contains(err.Error(), "uninstall.runtimeConfigs") {
		t.Errorf("a config at the top: %v, want an error naming uninstall.runtimeConfigs", err)
	}
}

// Only the install and the uninstall steps write where a runtime executes from: no container
// of the release's DaemonSet that runs on has a preStop (the guess that ended every group on
// a 401), or a writable mount of the hook's, the wrapper's or hooks.d's directory.
func TestNoLongRunningHostWrites(t *testing.T) {
	t.Parallel()
	for _, tc := range chartCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := get(render(t, tc.set...)["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
			hp := hostPaths(spec)
			runtimeDirs := []string{"/usr/local/libexec/oci/hooks.d", "/usr/share/containers/oci/hooks.d", "/usr/local/bin", "/etc/resctrl-mon"}
			for _, c := range list(spec, "containers") {
				name := get(c, "name")
				if ps := get(c, "lifecycle", "preStop"); ps != nil {
					t.Errorf("%s has a preStop: %v", name, ps)
				}
				for _, m := range list(c, "volumeMounts") {
					if h := hp[fmt.Sprint(get(m, "name"))]; slices.Contains(runtimeDirs, h) && get(m, "readOnly") != true {
						t.Errorf("%s mounts the host's %s writable at %v", name, h, get(m, "mountPath"))
					}
				}
			}
		})
	}
}
