package exporter

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/psi"
)

// TestPSITargets: the pod's cgroup with container "" and container_id "", each container's
// with its name (its id where none was recorded) and its id, under the cgroup2 root; cgroups
// the registry does not know are left out, pending pods are not.
func TestPSITargets(t *testing.T) {
	t.Parallel()
	pods := []inventory.Pod{
		{PodUID: "u1", Namespace: "ns", PodName: "p1", State: inventory.Active, Cgroup: "/kubepods/pod-u1",
			Containers: []inventory.Container{{ID: "id-a", Name: "app", Cgroup: "/kubepods/pod-u1/a"}, {ID: "id-b", Name: "app", Cgroup: "/kubepods/pod-u1/b"}}},
		{PodUID: "u2", Namespace: "ns", PodName: "p2", State: inventory.Pending, Containers: []inventory.Container{{ID: "c", Cgroup: "/c"}, {ID: "d"}}},
		{PodUID: "u3", State: inventory.Idle},
	}
	got := fmt.Sprint(psiTargets("/sys/fs/cgroup/unified", pods, nil))
	want := "[{/sys/fs/cgroup/unified/kubepods/pod-u1 [u1 ns p1  ]} {/sys/fs/cgroup/unified/kubepods/pod-u1/a [u1 ns p1 app id-a]} " +
		"{/sys/fs/cgroup/unified/kubepods/pod-u1/b [u1 ns p1 app id-b]} {/sys/fs/cgroup/unified/c [u2 ns p2 c c]}]"
	if got != want {
		t.Errorf("targets\n%s, want\n%s", got, want)
	}
}

// TestPSIAverages: with the averages on, the ratios come with a window label, described
// and collected consistently (a pedantic registry checks it).
func TestPSIAverages(t *testing.T) {
	t.Parallel()
	host := &cgroup.Host{}
	root, err := host.Dir("/")
	if err != nil || psi.Available(*host) != nil {
		t.Skip("no cgroup2 with pressure here")
	}
	if _, err := os.Stat(filepath.Join(root, "cpu.pressure")); err != nil {
		t.Skip(err)
	}
	src := &fake{pods: []inventory.Pod{{Path: "mon_groups/p", PodUID: "p", State: inventory.Pending,
		Containers: []inventory.Container{{ID: "c", Cgroup: "/"}}}}}
	c, err := New(src, Options{PSI: host, PSIAverages: true})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	for name, want := range map[string]int{"resctrl_mon_pressure_cpu_waiting_ratio": 3, "resctrl_mon_pressure_cpu_waiting_seconds_total": 1} {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n != want {
			t.Errorf("%s: %d series (%v), want %d", name, n, err, want)
		}
	}
}
