package identity

import (
	"errors"
	"strings"
	"testing"
)

// What CRI-O 1.34 put on a container whose CRI request carried only the sandbox's metadata
// (no kubelet labels), as captured (testdata/crio-nolabels.json): no io.kubernetes.pod.*,
// the pod in CRI-O's own sandbox name.
func crioNoLabels() map[string]string {
	return map[string]string{
		"io.container.manager":       "cri-o",
		CRIOContainerID:              "81b53d7b8dce53c324173848ad8a15cec920f5b3ef026cf817a215db81fa8272",
		CRIOContainerType:            "container",
		"io.kubernetes.cri-o.Labels": "null",
		"io.kubernetes.cri-o.Name":   "k8s_app_capture_e2e_6a1f3c2e-0000-4000-8000-0000000000c2_0",
		CRIOSandboxID:                "9c64873bd192e419bd0151cbe9a336e8b1634dc62f13ae84fef7640b9d400d57",
		CRIOSandboxName:              "k8s_capture_e2e_6a1f3c2e-0000-4000-8000-0000000000c2_0",
	}
}

func TestCRIOWithoutKubeletLabels(t *testing.T) {
	t.Parallel()
	got, err := FromAnnotations("81b53d7b8dce53c324173848ad8a15cec920f5b3ef026cf817a215db81fa8272", crioNoLabels())
	want := Identity{Runtime: CRIO, PodUID: "6a1f3c2e-0000-4000-8000-0000000000c2",
		SandboxID: "9c64873bd192e419bd0151cbe9a336e8b1634dc62f13ae84fef7640b9d400d57", Namespace: "e2e", PodName: "capture"}
	if err != nil || got != want {
		t.Errorf("got %+v, %v; want %+v", got, err, want)
	}
	// With kubelet's labels too, both must agree.
	a := crioNoLabels()
	a[CRIOPodUID], a[CRIOPodNamespace], a[CRIOPodName] = "6A1F3C2E000040008000-0000000000C2", "e2e", "capture"
	if _, err := FromAnnotations("c", a); err == nil {
		t.Errorf("a malformed UID label was accepted")
	}
	a[CRIOPodUID] = "6a1f3c2e-0000-4000-8000-0000000000c2"
	if got, err := FromAnnotations("c", a); err != nil || got.PodUID != want.PodUID {
		t.Errorf("labels and sandbox name agreeing: %+v, %v", got, err)
	}
	for key, v := range map[string]string{CRIOPodUID: "11111111-2222-3333-4444-555555555555", CRIOPodNamespace: "other", CRIOPodName: "other"} {
		b := crioNoLabels()
		b[CRIOPodUID], b[CRIOPodNamespace], b[CRIOPodName] = want.PodUID, "e2e", "capture"
		b[key] = v
		if _, err := FromAnnotations("c", b); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s disagreeing with the sandbox name: %v", key, err)
		}
	}
}

func TestParseCRIOSandboxName(t *testing.T) {
	t.Parallel()
	name, ns, uid, err := ParseCRIOSandboxName("k8s_web-1_shop_0f8b2c1e-1111-2222-3333-444455556666_3")
	if err != nil || name != "web-1" || ns != "shop" || uid != "0f8b2c1e-1111-2222-3333-444455556666" {
		t.Errorf("got %q %q %q %v", name, ns, uid, err)
	}
	for _, bad := range []string{"", "k8s", "k8s_a_b_c_0", "x8s_web_shop_0f8b2c1e-1111-2222-3333-444455556666_0",
		"k8s_web_shop_0f8b2c1e-1111-2222-3333-444455556666_x", "k8s_Web_shop_0f8b2c1e-1111-2222-3333-444455556666_0",
		"k8s_web_shop_extra_0f8b2c1e-1111-2222-3333-444455556666_0"} {
		if _, _, _, err := ParseCRIOSandboxName(bad); !errors.Is(err, ErrBadAnnotation) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func FuzzParseCRIOSandboxName(f *testing.F) {
	f.Add("k8s_web_shop_0f8b2c1e-1111-2222-3333-444455556666_0")
	f.Add("k8s_a_b_c_d")
	f.Fuzz(func(t *testing.T, s string) {
		name, ns, uid, err := ParseCRIOSandboxName(s)
		if err != nil {
			return
		}
		if !isName(name) || !isName(ns) || uid == "" || strings.Contains(name+ns+uid, "_") {
			t.Errorf("%q parsed as %q %q %q", s, name, ns, uid)
		}
		if got := "k8s_" + name + "_" + ns + "_" + uid + "_"; !strings.HasPrefix(s, got) {
			t.Errorf("%q does not start with %q", s, got)
		}
	})
}
