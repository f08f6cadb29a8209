package top_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/psi"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/top"
	"github.com/resctrl-mon/resctrl-mon/test/resctrltree"
)

// A sample of a fixture tree (resctrltree), without root: every owned pod, the counters of
// those with a group, and the pressure of the pod's own cgroup.
func TestSampleFixture(t *testing.T) {
	t.Parallel()
	inv, err := inventory.Open(resctrltree.Config(t, resctrltree.AET), resctrltree.Mount)
	if err != nil {
		t.Fatal(err)
	}
	host := resctrltree.Proc(t)
	s := top.NewSampler(inv, &host)
	if s.NoPSI != "" {
		t.Fatalf("no pressure: %s", s.NoPSI)
	}
	sample := s.Sample()
	if sample.Err != nil || len(sample.Pods) != 4 {
		t.Fatalf("sample: %d pods, %v", len(sample.Pods), sample.Err)
	}
	i := slices.IndexFunc(sample.Pods, func(p top.PodSample) bool { return p.Pod.PodUID == resctrltree.UIDActive })
	if i < 0 {
		t.Fatalf("no active pod: %+v", sample.Pods)
	}
	p := sample.Pods[i]
	if !slices.ContainsFunc(p.Pod.Readings, func(r resctrlfs.Reading) bool { return r.Name == resctrlfs.CoreEnergy && r.Value == 1042.371582 }) {
		t.Errorf("no AET energy: %+v", p.Pod.Readings)
	}
	// The pod's own cgroup stands for it (testdata/cgroup: some total=1001000 µs of cpu).
	cpu := p.Pressure[psi.CPU]
	if len(cpu) != 1 || !slices.Contains(slices.Collect(maps.Values(cpu)), 1001000) {
		t.Errorf("cpu pressure %v, want the pod cgroup's 1001000", cpu)
	}
}
