package exporter

import (
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/psimetrics"
)

// collectPSI exports the pressure of every pod's cgroup (container "") and of each of its
// containers' cgroups, pending pods included: a pod that has no group yet still has
// pressure to show.
func (c *Collector) collectPSI(ch chan<- prometheus.Metric, pods []inventory.Pod) {
	if c.psi == nil {
		return
	}
	root, ok := c.cgroup2Root()
	c.psiTargets = c.psiTargets[:0]
	if ok {
		c.psiTargets = psiTargets(root, pods, c.psiTargets)
	}
	c.psi.Collect(ch)
}

// cgroup2Root is where this process sees the cgroup v2 hierarchy, relative to which the
// registry keeps cgroup paths; a failure is counted and retried at the next scrape.
func (c *Collector) cgroup2Root() (string, bool) {
	dir, err := c.cgroupRoot.Dir()
	if err != nil {
		c.sourceError(SourceCgroup, err)
		return "", false
	}
	return dir, true
}

func psiTargets(root string, pods []inventory.Pod, out []psimetrics.Target) []psimetrics.Target {
	for _, p := range pods {
		if p.Cgroup != "" {
			out = append(out, psimetrics.Target{Dir: filepath.Join(root, p.Cgroup), Labels: []string{p.PodUID, p.Namespace, p.PodName, ""}})
		}
		for _, ct := range p.Containers {
			if ct.Cgroup != "" {
				out = append(out, psimetrics.Target{Dir: filepath.Join(root, ct.Cgroup), Labels: []string{p.PodUID, p.Namespace, p.PodName, ct.ID}})
			}
		}
	}
	return out
}
