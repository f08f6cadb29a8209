package exporter

import (
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/psimetrics"
)

// collectPSI exports the pressure of every pod's cgroup (container "", container_id "") and
// of each of its containers' cgroups, pending pods included: a pod that has no group yet still has
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

// psiTargets labels each container by its name, as cAdvisor and kubelet do (operators query
// container="app"), and by its runtime's id in container_id: a Kubernetes container's id is
// 64 hex digits under containerd and CRI-O alike, a new one each time kubelet re-creates it,
// and two records of one name (a container re-created before the old one's departure) stay
// two series. A container with no recorded name (a plain OCI container, whose id is the name
// its user gave; a record of an older version) keeps its id in both.
func psiTargets(root string, pods []inventory.Pod, out []psimetrics.Target) []psimetrics.Target {
	for _, p := range pods {
		if p.Cgroup != "" {
			out = append(out, psimetrics.Target{Dir: filepath.Join(root, p.Cgroup), Labels: []string{p.PodUID, p.Namespace, p.PodName, "", ""}})
		}
		for _, ct := range p.Containers {
			if ct.Cgroup == "" {
				continue
			}
			name := ct.Name
			if name == "" {
				name = ct.ID
			}
			out = append(out, psimetrics.Target{Dir: filepath.Join(root, ct.Cgroup), Labels: []string{p.PodUID, p.Namespace, p.PodName, name, ct.ID}})
		}
	}
	return out
}
