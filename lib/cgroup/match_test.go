package cgroup

import (
	"slices"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/proctest"
)

func TestMatches(t *testing.T) {
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
		if got := Matches(text, want); got != ok {
			t.Errorf("Matches(%q) = %v, want %v", want, got, ok)
		}
	}
	// The systemd driver's "slice:prefix:name" is the unit prefix-name.scope.
	systemd := []byte("0::/kubepods.slice/kubepods-pod1.slice/crio-abc.scope\n")
	if !Matches(systemd, "kubepods-pod1.slice:crio:abc") || Matches(systemd, "kubepods-pod1.slice:crio:abd") {
		t.Errorf("systemd cgroupsPath not matched as its scope")
	}
}

func FuzzMatches(f *testing.F) {
	f.Add([]byte("12:pids:/k8s/c1\n0::/x\n"), "/k8s/c1")
	f.Fuzz(func(t *testing.T, text []byte, want string) {
		if Matches(text, want) && (want == "" || want == "/" || !strings.Contains(string(text), strings.TrimPrefix(cgroupSuffix(want), "/"))) {
			t.Errorf("%q matched %q", want, text)
		}
	})
}

// A held process in a cgroup of its own is found there, alone: what the NRI adapter relies on
// when its runtime gives no pid.
func TestProcessesIn(t *testing.T) {
	t.Parallel()
	in := proctest.Hold(t, "sleep 600")
	// proctest's cgroups are in the v1 pids hierarchy; a cgroupsPath names them below it.
	path := strings.TrimPrefix(in.Cgroup, "/sys/fs/cgroup/pids")
	pids, err := Host{}.ProcessesIn(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pids, []int{in.Pid}) {
		t.Errorf("processes in %s: %v, want only the held init %d", path, pids, in.Pid)
	}
	if _, err := (Host{}).ProcessesIn("/"); err == nil {
		t.Errorf("the root cgroup was accepted as a container's")
	}
}
