package k8s

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Events on pods (docs/operations/events.md): on, the exporter alone gets a token, and the
// service account create on events, nothing more; off, no container gets a token and the
// service account no Role at all. In both modes.
func TestChartEvents(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"nri", "hooks"} {
		for _, enabled := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/enabled=%t", mode, enabled), func(t *testing.T) {
				t.Parallel()
				objs := render(t, "mode="+mode, fmt.Sprintf("events.enabled=%t", enabled), "events.rate=7",
					"kubernetesAPI=https://10.0.0.1:6443")
				if got := get(objs["ServiceAccount/rm-resctrl-mon"], "automountServiceAccountToken"); got != false {
					t.Errorf("ServiceAccount automountServiceAccountToken = %v, want false", got)
				}
				spec := get(objs["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
				if got := get(spec, "automountServiceAccountToken"); got != false {
					t.Errorf("pod automountServiceAccountToken = %v, want false", got)
				}
				// The release's own objects that grant rights (the cleanup's are
				// cleanup_chart_test.go's).
				var grants []string
				for key := range objs {
					if strings.Contains(key, "Role") && !strings.Contains(key, "cleanup") {
						grants = append(grants, key)
					}
				}
				slices.Sort(grants)
				const role = "ClusterRole/monitoring-rm-resctrl-mon-pod-events"
				want := []string{role, "ClusterRoleBinding/monitoring-rm-resctrl-mon-pod-events"}
				if !enabled {
					want = nil
				}
				if !slices.Equal(grants, want) {
					t.Errorf("rights granted: %q, want %q", grants, want)
				}
				if enabled {
					rules := list(objs[role], "rules")
					if len(rules) != 1 || fmt.Sprint(get(rules[0], "apiGroups")) != "[]" ||
						fmt.Sprint(get(rules[0], "resources")) != "[events]" || fmt.Sprint(get(rules[0], "verbs")) != "[create]" {
						t.Errorf("the ClusterRole's rules = %v, want create on core events only", rules)
					}
					subj := list(objs["ClusterRoleBinding/monitoring-rm-resctrl-mon-pod-events"], "subjects")
					if len(subj) != 1 || get(subj[0], "name") != "rm-resctrl-mon" || get(subj[0], "namespace") != "monitoring" {
						t.Errorf("the binding's subjects = %v", subj)
					}
				}
				for _, c := range append(list(spec, "initContainers"), list(spec, "containers")...) {
					name := get(c, "name")
					m := mountAt(c, serviceAccountDir)
					if has := m != nil; has != (enabled && name == "exporter") {
						t.Errorf("%s: service account mount %v (events.enabled %t)", name, m, enabled)
					}
				}
				exp := container(spec, "containers", "exporter")
				cmd := fmt.Sprint(get(exp, "command"))
				if got := strings.Contains(cmd, "--node-name=$(NODE_NAME)") && strings.Contains(cmd, "--api-server=https://10.0.0.1:6443"); got != enabled {
					t.Errorf("exporter command %s: --node-name and --api-server %t, want %t", cmd, got, enabled)
				}
				// The config the pod reads says so, with the rate.
				cfg := fmt.Sprint(get(releaseConfig(t, objs), "data", "config.yaml"))
				if !strings.Contains(cfg, fmt.Sprintf("events:\n  enabled: %t\n  rate: 7\n", enabled)) {
					t.Errorf("the pods' config.yaml:\n%s\nwant events enabled %t, rate 7", cfg, enabled)
				}
			})
		}
	}
}
