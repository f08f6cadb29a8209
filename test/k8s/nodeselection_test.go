package k8s

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The DaemonSets run only on nodes with the RDT label (the cleanup's Job, a waiter, anywhere),
// on top of nodeSelector; "" turns the label off; a malformed one is refused.
func TestChartNodeSelection(t *testing.T) {
	t.Parallel()
	selectors := func(set ...string) map[string]string {
		out := map[string]string{}
		for name, o := range render(t, append([]string{"uninstall.enabled=true"}, set...)...) {
			if sel := get(o, "spec", "template", "spec", "nodeSelector"); sel != nil {
				out[name] = fmt.Sprint(sel)
			}
		}
		return out
	}
	for name, sel := range selectors() {
		want := strings.HasPrefix(name, "DaemonSet/")
		if got := strings.Contains(sel, rdtLabel+":true"); got != want || !strings.Contains(sel, "kubernetes.io/os:linux") {
			t.Errorf("%s selects %s; want kubernetes.io/os=linux and the RDT label: %v", name, sel, want)
		}
	}
	for name, sel := range selectors("nodeSelection.rdtLabel=") {
		if strings.Contains(sel, rdtLabel) {
			t.Errorf("rdtLabel \"\": %s still selects %s", name, sel)
		}
	}
	for name, sel := range selectors("nodeSelection.rdtLabel=example.com/rdt") {
		if strings.HasPrefix(name, "DaemonSet/") && !strings.Contains(sel, "example.com/rdt:true") {
			t.Errorf("rdtLabel example.com/rdt: %s selects %s", name, sel)
		}
	}
	if _, err := helm(t, "template", "rm", chartDir(t), "--set", "nodeSelection.rdtLabel=not a label"); err == nil || !strings.Contains(err.Error(), "rdtLabel") {
		t.Errorf("a malformed rdtLabel: %v, want an error naming it", err)
	}
}

// A node without RDT monitoring never stalls the chart. On such a node (this VM's kernel has
// no resctrl: no /sys/fs/resctrl) a pod of the DaemonSet could not mount its resctrl root and
// would stay ContainerCreating, holding a rolling update's one unavailable slot for good
// (shown here with the selection off). By default the chart selects nodes by NFD's RDT label:
// on a cluster without NFD the install is refused, saying what to do; with NFD and no RDT on
// the node, install and upgrade complete at once with no pod there; labelling the node
// brings the pod.
func TestKubernetesNodeWithoutRDT(t *testing.T) {
	c := StartCluster(t, "containerd", ClusterOptions{NoRDT: true})
	chart := chartDir(t)
	// No pod runs on this node but the stalled one below: the image is never pulled.
	values := []string{"--namespace", namespace, "--create-namespace", "--set", "image.repository=localhost/not-pulled",
		"--set", "priorityClassName=", "--set", "resctrlMountPropagation=None"}
	install := func(args ...string) (string, error) {
		return c.run("", c.helm, append(append([]string{"upgrade", "--install", release, chart}, values...), args...)...)
	}

	// No NFD on the cluster: refused, naming what to do; nothing left behind.
	out, err := install("--wait", "--timeout", "60s")
	if err == nil {
		t.Fatalf("install on a cluster without node-feature-discovery succeeded:\n%s", out)
	}
	for _, want := range []string{"node-feature-discovery", rdtLabel, "nodeSelection.rdtLabel"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}

	// NFD labels the node, without RDT: installed at once, no pod on the node, and an
	// upgrade under --wait completes.
	c.Kubectl("label", "node", c.Node(), "feature.node.kubernetes.io/cpu-model.vendor_id=GenuineIntel")
	start := time.Now()
	if _, err := install("--wait", "--timeout", "120s"); err != nil {
		t.Fatalf("install with NFD and no RDT: %v", err)
	}
	if _, err := install("--wait", "--timeout", "120s", "--set", "config.retention=90s"); err != nil {
		t.Fatalf("upgrade with NFD and no RDT: %v", err)
	}
	t.Logf("install and upgrade on a node without RDT: %s", time.Since(start).Round(100*time.Millisecond))
	if n := c.Kubectl("-n", namespace, "get", "ds", daemonSet, "-o", "jsonpath={.status.desiredNumberScheduled}"); n != "0" {
		t.Errorf("pods wanted on a node without RDT: %s", n)
	}

	// With the selection off, the pod on this node cannot start: the stall the label avoids.
	if _, err := install("--set", "nodeSelection.rdtLabel="); err != nil {
		t.Fatalf("upgrade with nodeSelection.rdtLabel \"\": %v", err)
	}
	c.Eventually(120*time.Second, "the pod on a node without resctrl reported unable to mount it", func() (bool, string) {
		ev := c.Kubectl("-n", namespace, "get", "events", "--field-selector", "reason=FailedMount", "-o", "jsonpath={.items[*].message}")
		return strings.Contains(ev, "/sys/fs/resctrl"), ev
	})
	if ready := c.Kubectl("-n", namespace, "get", "ds", daemonSet, "-o", "jsonpath={.status.numberReady}"); ready != "0" {
		t.Errorf("a pod became ready on a node without resctrl: %s", ready)
	}

	// The node gets its RDT label (as NFD would on an RDT node): the DaemonSet wants its pod.
	if _, err := install(); err != nil {
		t.Fatalf("upgrade back to the default selection: %v", err)
	}
	c.Kubectl("label", "node", c.Node(), rdtLabel+"=true")
	c.Eventually(60*time.Second, "the DaemonSet wants a pod on the labelled node", func() (bool, string) {
		n := c.Kubectl("-n", namespace, "get", "ds", daemonSet, "-o", "jsonpath={.status.desiredNumberScheduled}")
		return n == "1", n
	})
	if _, err := c.run("", c.helm, "uninstall", release, "--namespace", namespace, "--no-hooks", "--wait"); err != nil {
		t.Errorf("helm uninstall: %v", err)
	}
}
