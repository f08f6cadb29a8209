package k8s

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// docs/install/policy-engines.md's examples except the chart's pods and only them: the Kyverno
// PolicyException names every workload a release named resctrl-mon renders in kube-system (the
// DaemonSet, and the cleanup's at uninstall), each kind, and a policy for each host feature
// those pods use; the Gatekeeper constraint's selector is the label the pods carry; the Argo
// CD Application installs that release there.
func TestPolicyEngineDocs(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "install", "policy-engines.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]obj{}
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		var o obj
		if err := yaml.Unmarshal([]byte(m[1]), &o); err != nil {
			t.Fatalf("a YAML example does not parse: %v\n%s", err, m[1])
		}
		docs[fmt.Sprint(o["kind"])] = o
	}
	exc, gk, app := docs["PolicyException"], docs["K8sPSPHostNamespace"], docs["Application"]
	if exc == nil || gk == nil || app == nil {
		t.Fatalf("examples found: %v; want a PolicyException, a K8sPSPHostNamespace and an Application", slices.Sorted(maps.Keys(docs)))
	}
	if ns := get(app, "spec", "destination", "namespace"); ns != "kube-system" || get(app, "spec", "source", "helm", "releaseName") != "resctrl-mon" {
		t.Errorf("the Application installs into %v as %v, want kube-system as resctrl-mon", ns, get(app, "spec", "source", "helm", "releaseName"))
	}
	objs := renderAs(t, "resctrl-mon", "kube-system", "mode=hooks", "uninstall.enabled=true", "wrapper.enabled=true")
	res := get(exc, "spec", "match", "any", "0", "resources").(map[string]any)
	kinds, names, namespaces := strings_(res["kinds"]), strings_(res["names"]), strings_(res["namespaces"])
	if !slices.Contains(kinds, "Pod") || !slices.Equal(namespaces, []string{"kube-system"}) {
		t.Errorf("the exception matches kinds %v in %v: want Pod among them, in kube-system only", kinds, namespaces)
	}
	policies := map[string]bool{}
	for _, e := range get(exc, "spec", "exceptions").([]any) {
		policies[fmt.Sprint(get(e, "policyName"))] = true
		for _, r := range strings_(get(e, "ruleNames")) {
			if !strings.HasPrefix(r, "autogen-") && !slices.Contains(strings_(get(e, "ruleNames")), "autogen-"+r) {
				t.Errorf("policy %v: rule %s without its autogen-%s (the rule Kyverno writes for controllers)", get(e, "policyName"), r, r)
			}
		}
	}
	workloads := 0
	for name, o := range objs {
		spec, ok := get(o, "spec", "template", "spec").(map[string]any)
		if !ok {
			continue
		}
		workloads++
		kind, n := strings.Split(name, "/")[0], fmt.Sprint(get(o, "metadata", "name"))
		if !slices.Contains(kinds, kind) {
			t.Errorf("the exception does not match kind %s (%s)", kind, name)
		}
		if !slices.ContainsFunc(names, func(p string) bool { ok, _ := path.Match(p, n); return ok }) {
			t.Errorf("the exception does not name %s", name)
		}
		if v := get(o, "spec", "template", "metadata", "labels", "app.kubernetes.io/instance"); v != "resctrl-mon" {
			t.Errorf("%s's pods are labelled app.kubernetes.io/instance=%v, which the Gatekeeper example does not select on", name, v)
		}
		uses := map[string]bool{
			"disallow-host-namespaces": spec["hostPID"] == true || spec["hostNetwork"] == true,
			// A host-network pod's container port is a host port (the API server sets it).
			"disallow-host-ports":    spec["hostNetwork"] == true,
			"require-run-as-nonroot": true, // uid 0: resctrl, the state dir, other pods' /proc
		}
		vs, _ := spec["volumes"].([]any)
		for _, v := range vs {
			if _, ok := v.(map[string]any)["hostPath"]; ok {
				uses["disallow-host-path"] = true
			}
		}
		for p, used := range uses {
			if used && !policies[p] {
				t.Errorf("%s needs an exception from %s, which the example does not give", name, p)
			}
		}
	}
	if workloads < 3 {
		t.Errorf("%d workloads rendered, want the DaemonSet and the cleanup's DaemonSet and Job", workloads)
	}
	sel := get(gk, "spec", "match", "labelSelector", "matchExpressions", "0").(map[string]any)
	if sel["key"] != "app.kubernetes.io/instance" || sel["operator"] != "NotIn" || !slices.Equal(strings_(sel["values"]), []string{"resctrl-mon"}) {
		t.Errorf("the Gatekeeper example selects %v, want app.kubernetes.io/instance NotIn [resctrl-mon]", sel)
	}
}

func strings_(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, fmt.Sprint(x))
	}
	return out
}
