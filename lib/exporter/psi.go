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

// cgroup2Root is where this process sees the cgroup v2 hierarchy: /sys/fs/cgroup on a pure
// v2 host, /sys/fs/cgroup/unified on a hybrid one. The registry keeps cgroup paths
// relative to it. Found once; a failure is counted and retried at the next scrape.
func (c *Collector) cgroup2Root() (string, bool) {
	if c.cgroupRoot != "" {
		return c.cgroupRoot, true
	}
	dir, err := c.opts.PSI.Dir("/")
	if err != nil {
		c.sourceError(SourceCgroup, err)
		return "", false
	}
	c.cgroupRoot = dir
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
