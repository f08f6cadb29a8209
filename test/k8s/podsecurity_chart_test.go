package k8s

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Pod Security check refuses a namespace that enforces baseline or restricted, naming the
// label to set, and lets any other through. lookup finds nothing under `helm template`, so the
// chart is copied with the look-up's answer written in (the real look-up is the cluster
// scenario's: admission_test.go).
func TestChartPodSecurityCheck(t *testing.T) {
	t.Parallel()
	const lookup = `{{- $ns := lookup "v1" "Namespace" "" .Release.Namespace }}`
	src, err := os.ReadFile(filepath.Join(chartDir(t), "templates", "podsecurity.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), lookup) {
		t.Fatalf("templates/podsecurity.yaml no longer has %s", lookup)
	}
	for _, tc := range []struct {
		name, ns, set, want string // want "": rendered
	}{
		{"baseline", `dict "metadata" (dict "labels" (dict "pod-security.kubernetes.io/enforce" "baseline"))`, "", "pod-security.kubernetes.io/enforce=privileged"},
		{"restricted", `dict "metadata" (dict "labels" (dict "pod-security.kubernetes.io/enforce" "restricted"))`, "", `enforces Pod Security "restricted"`},
		{"privileged", `dict "metadata" (dict "labels" (dict "pod-security.kubernetes.io/enforce" "privileged"))`, "", ""},
		{"no label", `dict "metadata" (dict "name" "x")`, "", ""},
		{"not found", `dict`, "", ""},
		{"check off", `dict "metadata" (dict "labels" (dict "pod-security.kubernetes.io/enforce" "baseline"))`, "podSecurityCheck=false", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "resctrl-mon")
			if err := os.CopyFS(dir, os.DirFS(chartDir(t))); err != nil {
				t.Fatal(err)
			}
			tpl := strings.Replace(string(src), lookup, `{{- $ns := `+tc.ns+` }}`, 1)
			if err := os.WriteFile(filepath.Join(dir, "templates", "podsecurity.yaml"), []byte(tpl), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"template", "rm", dir, "--namespace", "monitoring"}
			if tc.set != "" {
				args = append(args, "--set", tc.set)
			}
			_, err := helm(t, args...)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "namespace monitoring")):
				t.Errorf("error %v, want one naming namespace monitoring and saying %q", err, tc.want)
			}
		})
	}
}
