package hook

import (
	"strings"
	"testing"
)

func TestInCgroup(t *testing.T) {
	t.Parallel()
	text := []byte("12:pids:/k8s/pod1/c1\n11:memory:/k8s/pod1/c1\n0::/\n")
	for want, ok := range map[string]bool{
		"/k8s/pod1/c1": true,
		"pod1/c1":      true, // a relative cgroupsPath, below the runtime's own cgroup
		"/k8s/pod1":    false,
		"/":            false,
		"":             false,
		"/other":       false,
	} {
		if got := inCgroup(text, want); got != ok {
			t.Errorf("inCgroup(%q) = %v, want %v", want, got, ok)
		}
	}
	if got := cgroupSuffix("system.slice:crio:abc"); got != "crio-abc.scope" {
		t.Errorf("systemd cgroupsPath: %s", got)
	}
}

func FuzzInCgroup(f *testing.F) {
	f.Add([]byte("12:pids:/k8s/c1\n0::/x\n"), "/k8s/c1")
	f.Fuzz(func(t *testing.T, text []byte, want string) {
		if inCgroup(text, want) && (want == "" || want == "/" || !strings.Contains(string(text), strings.TrimPrefix(want, "/"))) {
			t.Errorf("%q matched %q", want, text)
		}
	})
}
