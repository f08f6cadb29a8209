package k8s

import (
	"fmt"
	"strings"
	"testing"
)

// The LSM knobs: an AppArmor profile for every container (the field from Kubernetes 1.30, the
// annotation before), none named by default (kubelet refuses a pod naming one on a node
// without AppArmor), and the pod's SELinux label and security context.
func TestChartLSM(t *testing.T) {
	t.Parallel()
	def := render(t, "mode=hooks")
	spec := get(def["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
	if sc := get(spec, "securityContext"); sc != nil {
		t.Errorf("pod securityContext by default = %v, want none", sc)
	}
	for _, c := range append(list(spec, "initContainers"), list(spec, "containers")...) {
		if p := get(c, "securityContext", "appArmorProfile"); p != nil {
			t.Errorf("%s: appArmorProfile by default = %v, want none", get(c, "name"), p)
		}
	}
	for k := range get(def["DaemonSet/rm-resctrl-mon"], "spec", "template", "metadata", "annotations").(map[string]any) {
		if strings.Contains(k, "apparmor") {
			t.Errorf("AppArmor annotation %s by default", k)
		}
	}

	objs := render(t, "mode=hooks", "appArmorProfile.type=RuntimeDefault", "seLinuxOptions.type=spc_t", "podSecurityContext.fsGroup=0")
	spec = get(objs["DaemonSet/rm-resctrl-mon"], "spec", "template", "spec")
	if got := fmt.Sprint(get(spec, "securityContext")); got != "map[fsGroup:0 seLinuxOptions:map[type:spc_t]]" {
		t.Errorf("pod securityContext = %s", got)
	}
	all := append(list(spec, "initContainers"), list(spec, "containers")...)
	if len(all) != 3 {
		t.Fatalf("containers: %v", names(all, "name"))
	}
	for _, c := range all {
		if got := fmt.Sprint(get(c, "securityContext", "appArmorProfile")); got != "map[type:RuntimeDefault]" {
			t.Errorf("%s: appArmorProfile = %s", get(c, "name"), got)
		}
	}

	// Before 1.30: the deprecated annotation, one per container, and no field the API server
	// would drop or refuse.
	out, err := helm(t, "template", "rm", chartDir(t), "--kube-version", "1.29.0", "--set", "mode=nri", "--set", "appArmorProfile.type=Localhost",
		"--set", "appArmorProfile.localhostProfile=resctrl-mon")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "appArmorProfile:") {
		t.Error("Kubernetes 1.29: securityContext.appArmorProfile rendered")
	}
	for _, c := range []string{"exporter", "nri-adapter"} {
		if want := "container.apparmor.security.beta.kubernetes.io/" + c + ": localhost/resctrl-mon"; !strings.Contains(out, want) {
			t.Errorf("Kubernetes 1.29: no annotation %q", want)
		}
	}
}
