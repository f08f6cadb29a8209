package k8s

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// configName is the release's ConfigMap: its name and a hash of its content.
var configName = regexp.MustCompile(`^ConfigMap/rm-resctrl-mon-[0-9a-f]{10}$`)

// releaseConfig is the release's ConfigMap among rendered objects (not the dashboard's or
// the cleanup's).
func releaseConfig(t *testing.T, objs map[string]obj) obj {
	t.Helper()
	var found []string
	for name := range objs {
		if configName.MatchString(name) {
			found = append(found, name)
		}
	}
	if len(found) != 1 {
		t.Fatalf("the release's ConfigMap: found %q, want one named rm-resctrl-mon-<hash>", found)
	}
	return objs[found[0]]
}

// A rolling upgrade runs old and new pods side by side: each reads the ConfigMap of its own
// content, never one an upgrade changed under it (an old pod's strict loader would refuse a
// newer chart's keys, and crash-loop on its next restart). The same values make the same
// name, so an upgrade that changes no config rolls nothing; any change of content (a value,
// the mode's extra file) makes another; the DaemonSet mounts the one rendered with it.
func TestChartConfigPerContent(t *testing.T) {
	t.Parallel()
	name := func(set ...string) string {
		objs := render(t, set...)
		cm := releaseConfig(t, objs)
		n := fmt.Sprint(get(cm, "metadata", "name"))
		if mounted := daemonSetConfig(objs); mounted != n {
			t.Errorf("%v: the DaemonSet mounts ConfigMap %q, the release's is %q", set, mounted, n)
		}
		return n
	}
	base := name()
	if again := name(); again != base {
		t.Errorf("the same values made ConfigMaps %s and %s", base, again)
	}
	if same := name("exporter.port=9999"); same != base {
		t.Errorf("a value outside the config changed the ConfigMap: %s, was %s", same, base)
	}
	seen := map[string]string{base: "defaults"}
	for _, set := range []string{"config.retention=90s", "config.failurePolicy=closed", "mode=hooks", "mode=hooks,hooks.log=stderr"} {
		n := name(set)
		if prev, ok := seen[n]; ok {
			t.Errorf("--set %s made the ConfigMap of %s: %s", set, prev, n)
		}
		seen[n] = set
	}
}

// daemonSetConfig is the ConfigMap the DaemonSet's pods mount as their config.
func daemonSetConfig(objs map[string]obj) string {
	for name, o := range objs {
		if !strings.HasPrefix(name, "DaemonSet/") || strings.HasSuffix(name, "-cleanup") {
			continue
		}
		vs, _ := get(o, "spec", "template", "spec", "volumes").([]any)
		for _, v := range vs {
			if v := v.(map[string]any); v["name"] == "config" {
				return fmt.Sprint(get(v, "configMap", "name"))
			}
		}
	}
	return ""
}
