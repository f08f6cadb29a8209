package k8s

import (
	"strings"
)

// podSecurity: a namespace that enforces Pod Security "baseline" refuses the DaemonSet's pods
// (host PID, host network, hostPath), which would leave `helm install --wait` hanging on a
// DaemonSet with no pod. The chart looks the namespace up and refuses at once, saying which
// label to set; nothing of the release is left behind.
func (s *scenario) podSecurity() {
	t := s.t
	const ns = "baseline-only"
	s.Apply(`apiVersion: v1
kind: Namespace
metadata:
  name: ` + ns + `
  labels: {pod-security.kubernetes.io/enforce: baseline}
`)
	out, err := s.run("", s.helm, "install", release, chartRef(s.registry), "--version", chartVersion("test1"), "--plain-http",
		"--namespace", ns, "-f", s.writeValues("test1"), "--wait", "--timeout", "60s")
	if err == nil {
		t.Fatalf("helm install into a namespace enforcing baseline succeeded:\n%s", out)
	}
	for _, want := range []string{ns, "baseline", "pod-security.kubernetes.io/enforce=privileged"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("helm install into a baseline namespace: the error does not say %q: %v", want, err)
		}
	}
	if rel, _ := s.run("", s.helm, "list", "-a", "-q", "--namespace", ns); strings.TrimSpace(rel) != "" {
		t.Errorf("a refused install left release %q in %s", strings.TrimSpace(rel), ns)
	}
	s.Kubectl("delete", "namespace", ns, "--wait=false")
	t.Logf("helm install into a namespace enforcing baseline was refused: %v", err)
}
