package k8s

import (
	"fmt"
	"time"
)

// keeps: the DaemonSet's pod taken away the ways a cluster does it besides an uninstall (a
// force delete, which kubelet learns of only afterwards and during which a new pod may start
// beside the old one; an eviction through the API, as a drain or a node-pressure eviction
// does): every group, RMID and task is kept.
func (s *scenario) keeps(wl *workloads, before groupState) {
	old := s.daemonPod()
	s.Kubectl("-n", namespace, "delete", "pod", old.Name, "--grace-period=0", "--force")
	s.waitReplaced(old)
	s.requireSame("after a force delete of the DaemonSet's pod", wl, before)

	old = s.daemonPod()
	eviction := fmt.Sprintf(`{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": %q, "namespace": %q}}`, old.Name, namespace)
	if _, err := s.run(eviction, s.kubectl, "create", "--raw", fmt.Sprintf("/api/v1/namespaces/%s/pods/%s/eviction", namespace, old.Name), "-f", "-"); err != nil {
		s.t.Fatalf("evict the DaemonSet's pod: %v", err)
	}
	s.waitReplaced(old)
	s.requireSame("after an eviction of the DaemonSet's pod", wl, before)
}

// waitReplaced waits for the DaemonSet to run a pod other than old, Ready.
func (s *scenario) waitReplaced(old Pod) {
	s.Eventually(120*time.Second, "the DaemonSet's pod "+old.Name+" replaced", func() (bool, string) {
		pods, err := s.PodsOf(namespace, "app.kubernetes.io/name=resctrl-mon")
		if err != nil {
			return false, err.Error()
		}
		if len(pods) != 1 || pods[0].UID == old.UID {
			return false, fmt.Sprintf("%d pods", len(pods))
		}
		for _, c := range pods[0].Containers {
			if !c.Running {
				return false, c.Name + " not running"
			}
		}
		return true, ""
	})
	s.Kubectl("-n", namespace, "rollout", "status", "ds/"+daemonSet, "--timeout=120s")
}
