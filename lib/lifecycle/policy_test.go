package lifecycle

import (
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
)

func TestGroupName(t *testing.T) {
	t.Parallel()
	pod := identity.Identity{Runtime: identity.CRIO, PodUID: podA, SandboxID: sbA, Namespace: "shop"}
	podman := identity.Identity{Runtime: identity.Podman, SandboxID: sbB}
	plain := identity.Identity{}
	for name, tc := range map[string]struct {
		edit func(*config.Config)
		idn  identity.Identity
		ann  map[string]string
		want string
	}{
		"pod":                {nil, pod, nil, podA},
		"podman pod":         {nil, podman, nil, sbB},
		"no pod: own group":  {nil, plain, nil, "ctr-c1"},
		"no pod: skip":       {func(c *config.Config) { c.NoPod = config.NoPodSkip }, plain, nil, ""},
		"per container":      {func(c *config.Config) { c.Granularity = config.PerContainer }, pod, nil, "ctr-c1"},
		"opted out":          {nil, pod, map[string]string{"resctrl-mon.io/disable": "true"}, ""},
		"opt-out not true":   {nil, pod, map[string]string{"resctrl-mon.io/disable": "yes"}, podA},
		"opt-in missing":     {func(c *config.Config) { c.Annotations.OptIn = "x/monitor" }, pod, nil, ""},
		"opted in":           {func(c *config.Config) { c.Annotations.OptIn = "x/monitor" }, pod, map[string]string{"x/monitor": "true"}, podA},
		"namespace included": {func(c *config.Config) { c.Namespaces.Include = []string{"shop"} }, pod, nil, podA},
		"namespace not in":   {func(c *config.Config) { c.Namespaces.Include = []string{"web"} }, pod, nil, ""},
		"include, no pod":    {func(c *config.Config) { c.Namespaces.Include = []string{"web"} }, plain, nil, ""},
		"namespace excluded": {func(c *config.Config) { c.Namespaces.Exclude = []string{"shop"} }, pod, nil, ""},
		"exclude other":      {func(c *config.Config) { c.Namespaces.Exclude = []string{"kube-system"} }, pod, nil, podA},
	} {
		cfg := config.Default()
		if tc.edit != nil {
			tc.edit(&cfg)
		}
		got, why := groupName(cfg, "c1", tc.idn, tc.ann)
		if got != tc.want || (got == "" && why == "") {
			t.Errorf("%s: %q (%s), want %q", name, got, why, tc.want)
		}
	}
}
