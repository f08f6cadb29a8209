package exporter

import (
	"fmt"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
)

// TestPSITargets: the pod's cgroup with container "", each container's with its id, under
// the cgroup2 root; cgroups the registry does not know are left out, pending pods are not.
func TestPSITargets(t *testing.T) {
	t.Parallel()
	pods := []inventory.Pod{
		{PodUID: "u1", Namespace: "ns", PodName: "p1", State: inventory.Active, Cgroup: "/kubepods/pod-u1",
			Containers: []inventory.Container{{ID: "a", Cgroup: "/kubepods/pod-u1/a"}, {ID: "b", Cgroup: "/kubepods/pod-u1/b"}}},
		{PodUID: "u2", Namespace: "ns", PodName: "p2", State: inventory.Pending, Containers: []inventory.Container{{ID: "c", Cgroup: "/c"}, {ID: "d"}}},
		{PodUID: "u3", State: inventory.Idle},
	}
	got := fmt.Sprint(psiTargets("/sys/fs/cgroup/unified", pods, nil))
	want := "[{/sys/fs/cgroup/unified/kubepods/pod-u1 [u1 ns p1 ]} {/sys/fs/cgroup/unified/kubepods/pod-u1/a [u1 ns p1 a]} " +
		"{/sys/fs/cgroup/unified/kubepods/pod-u1/b [u1 ns p1 b]} {/sys/fs/cgroup/unified/c [u2 ns p2 c]}]"
	if got != want {
		t.Errorf("targets\n%s, want\n%s", got, want)
	}
}
