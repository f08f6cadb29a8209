package lifecycle

import (
	"os"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// parseConfig is the config a node's file gives: the namespace lists are set as an admin
// sets them, in YAML.
func parseConfig(t *testing.T, yaml string) config.Config {
	t.Helper()
	c, err := config.Parse(strings.NewReader(yaml))
	if err != nil {
		t.Fatalf("config %q: %v", yaml, err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("config %q: %v", yaml, err)
	}
	return c
}

// A pod sets its own annotations: the opt-out is honoured only in the namespaces the admin
// lists ("*", a file's default, is every one; an empty list, the chart's default, none), so a
// tenant elsewhere cannot hide from attribution.
func TestOptOutHonouredOnlyInListedNamespaces(t *testing.T) {
	t.Parallel()
	optOut := map[string]string{"resctrl-mon.io/disable": "true"}
	shop := identity.Identity{Runtime: identity.CRIO, PodUID: podA, SandboxID: sbA, Namespace: "shop"}
	infra := identity.Identity{Runtime: identity.CRIO, PodUID: podA, SandboxID: sbA, Namespace: "infra"}
	plain := identity.Identity{}
	for name, tc := range map[string]struct {
		yaml    string
		idn     identity.Identity
		want    string
		refused bool
	}{
		"no list: honoured":             {"", shop, "", false},
		"listed namespace: honoured":    {"annotations: {optOutNamespaces: [infra]}", infra, "", false},
		"other namespace: monitored":    {"annotations: {optOutNamespaces: [infra]}", shop, podA, true},
		"no namespace, list: monitored": {"annotations: {optOutNamespaces: [infra]}", plain, "ctr-c1", true},
		"empty list: monitored":         {"annotations: {optOutNamespaces: []}", shop, podA, true},
		"empty list, no namespace":      {"annotations: {optOutNamespaces: []}", plain, "ctr-c1", true},
		"every namespace: honoured":     {"annotations: {optOutNamespaces: ['*']}", shop, "", false},
		"every, no namespace: honoured": {"annotations: {optOutNamespaces: ['*']}", plain, "", false},
		"no list, no namespace":         {"", plain, "", false},
	} {
		cfg := parseConfig(t, tc.yaml)
		got, why := groupName(cfg, "c1", tc.idn, optOut)
		if got != tc.want || (got == "" && why == "") {
			t.Errorf("%s: %q (%s), want %q", name, got, why, tc.want)
		}
		if refused := optOutRefused(cfg, tc.idn, optOut) != ""; refused != tc.refused {
			t.Errorf("%s: refused %v, want %v", name, refused, tc.refused)
		}
	}
	// Without the annotation there is nothing to refuse.
	if r := optOutRefused(parseConfig(t, "annotations: {optOutNamespaces: [infra]}"), shop, nil); r != "" {
		t.Errorf("no annotation: refused %q", r)
	}
}

// Through Place: a refused opt-out places the container as any other and counts the
// refusal (failures_total{reason="annotation"}); a refused bandwidth annotation leaves the pod
// ranked by occupancy alone, counted the same way.
func TestRefusedAnnotationsAreCounted(t *testing.T) {
	t.Parallel()
	cfg := parseConfig(t, "annotations: {optOutNamespaces: [infra]}\nmbmAssignment: policy\nmbmAssignmentNamespaces: [infra]\n")
	e := newEnv(t, bareFake(4), withConfig(func(c *config.Config) {
		c.Annotations, c.MBMAssignment, c.MBMAssignmentNamespaces = cfg.Annotations, cfg.MBMAssignment, cfg.MBMAssignmentNamespaces
	}))
	fake := e.fake
	fake.ForgetTasks()
	pid := os.Getpid()
	hidden := crio(podA, sbA) // namespace default
	hidden["resctrl-mon.io/disable"] = "true"
	if out, err := e.create("a1", pid, hidden); err != nil || out.Action != vocab.Created {
		t.Fatalf("opted out outside infra: %+v, %v, want created", out, err)
	}
	greedy := fakeCrio(podB)
	greedy["resctrl-mon.io/bandwidth"] = "true"
	if out, err := e.create("b1", pid, greedy); err != nil || out.Action != vocab.Created {
		t.Fatalf("bandwidth outside infra: %+v, %v, want created", out, err)
	}
	r, ok, err := e.m.Store().Load(podB)
	if err != nil || !ok || r.MBMWanted {
		t.Errorf("record of the pod asking for bandwidth outside infra: %+v, %v, %v; want MBMWanted false", r, ok, err)
	}
	counts, err := e.m.Store().Counts()
	if err != nil {
		t.Fatal(err)
	}
	if n := counts["failure.annotation"]; n != 2 {
		t.Errorf("failure.annotation counted %d, want 2 (%v)", n, counts)
	}
	// In a listed namespace both are honoured and nothing is counted.
	e2 := newEnv(t, bareFake(4), withConfig(func(c *config.Config) {
		c.Annotations, c.MBMAssignment, c.MBMAssignmentNamespaces = cfg.Annotations, cfg.MBMAssignment, cfg.MBMAssignmentNamespaces
	}))
	fake2 := e2.fake
	fake2.ForgetTasks()
	greedy[identity.CRIOPodNamespace] = "infra"
	if _, err := e2.create("b1", pid, greedy); err != nil {
		t.Fatal(err)
	}
	if r, ok, err := e2.m.Store().Load(podB); err != nil || !ok || !r.MBMWanted {
		t.Errorf("record of the pod asking for bandwidth in infra: %+v, %v, %v; want MBMWanted", r, ok, err)
	}
	hidden[identity.CRIOPodNamespace] = "infra"
	if out, err := e2.create("a1", pid, hidden); err != nil || out.Action != vocab.Skipped {
		t.Errorf("opted out in infra: %+v, %v, want skipped", out, err)
	}
	if counts, _ := e2.m.Store().Counts(); counts["failure.annotation"] != 0 {
		t.Errorf("honoured annotations counted as refused: %v", counts)
	}
}
