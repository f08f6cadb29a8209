package podevents

import (
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/kubeapi"
)

func TestValidPod(t *testing.T) {
	t.Parallel()
	uid := "0b9f7c4e-1111-2222-3333-444455556666"
	for _, tc := range []struct {
		ns, name, uid string
		ok            bool
	}{
		{"default", "web-0", uid, true},
		{"kube-system", "etcd-node.example.com", "9e7c0a1b2c3d4e5f60718293a4b5c6d7", true},
		{strings.Repeat("n", 63), strings.Repeat("p", 253), uid, true},
		{strings.Repeat("n", 64), "p", uid, false},
		{"ns", strings.Repeat("p", 254), uid, false},
		{"", "p", uid, false},
		{"ns", "", uid, false},
		{"ns", "p", "", false},
		{"Default", "p", uid, false},
		{"ns", "../x", uid, false},
		{"ns", "a..b", uid, false},
		{"ns", "-a", uid, false},
		{"ns", "a.", uid, false},
		{"ns/x", "p", uid, false},
		{"ns", "p?watch=1", uid, false},
		{"ns", "p", "not-a-uid!", false},
		{"ns", "p", strings.Repeat("a", 65), false},
		{"ns", "p\x00", uid, false},
	} {
		err := ValidPod(kubeapi.PodRef{Namespace: tc.ns, Name: tc.name, UID: tc.uid})
		if (err == nil) != tc.ok {
			t.Errorf("ValidPod(%q, %q, %q) = %v", tc.ns, tc.name, tc.uid, err)
		}
	}
}

// A record's pod is outside input: whatever it holds, ValidPod answers without panicking, and
// what it lets through is safe in a URL path and an Event's name.
func FuzzValidPod(f *testing.F) {
	f.Add("default", "web-0", "0b9f7c4e-1111-2222-3333-444455556666")
	f.Add("a-b", "a.b-c.d", "ABCDEF")
	f.Add("../", "%2F", "\xff")
	f.Fuzz(func(t *testing.T, ns, name, uid string) {
		p := kubeapi.PodRef{Namespace: ns, Name: name, UID: uid}
		if ValidPod(p) != nil {
			return
		}
		for _, s := range []string{ns, name, uid, kubeapi.EventName(p, string(Pending))} {
			if strings.ContainsAny(s, "/?#%\\ \x00") || strings.Contains(s, "..") || len(s) > 253 || s == "" {
				t.Errorf("ValidPod let %q through", s)
			}
		}
	})
}
