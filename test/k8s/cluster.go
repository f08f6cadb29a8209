package k8s

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
)

// rdtLabel is the label node-feature-discovery puts on a node whose CPU has RDT monitoring,
// the chart's default nodeSelection.rdtLabel.
const rdtLabel = "feature.node.kubernetes.io/cpu-rdt.RDTMON"

// Cluster is a running one-node cluster of cluster.sh, and the commands an operator drives
// it with.
type Cluster struct {
	t       *testing.T
	Work    string // KWORK: every path of the cluster
	Runtime string // containerd | crio
	kubectl string
	helm    string
	helmDir string
}

// ClusterOptions are what a test adds to the node.
type ClusterOptions struct {
	// Images are OCI archives loaded into the runtime (besides localhost/busybox:k8s).
	Images []string
	// Forker is a static binary copied into the test image as /bin/forker.
	Forker string
	// Registry is a plain-HTTP registry on loopback (host:port) the runtime may pull from.
	Registry string
	// NoRDT leaves the node without the RDT label node-feature-discovery puts on a node whose
	// CPU has RDT monitoring (rdtLabel, the chart's nodeSelection.rdtLabel). Without it the
	// node is labelled so: the simulator stands in for its RDT.
	NoRDT bool
}

// WrapperPath and WrapperConfig are where containerd's "resctrl-mon" runtime handler finds
// the runtime wrapper and its config: where the chart is told to install them.
func (c *Cluster) WrapperPath() string {
	return filepath.Join(c.Work, "host", "bin", "resctrl-mon-runtime")
}

// WrapperConfig: see WrapperPath.
func (c *Cluster) WrapperConfig() string {
	return filepath.Join(c.Work, "host", "etc", "resctrl-mon", "config.yaml")
}

// StartCluster brings a node up on runtime (containerd, with NRI; crio, with hooks.d) and
// tears it down, restoring the host, when the test ends. Only one cluster runs at a time
// (its ports are fixed).
func StartCluster(t *testing.T, runtime string, opts ClusterOptions) *Cluster {
	t.Helper()
	e2e.RequireRoot(t)
	kbin := cached(t, "kubernetes")
	c := &Cluster{t: t, Runtime: runtime, kubectl: filepath.Join(kbin, "kubectl"), helm: filepath.Join(cached(t, "helm"), "helm")}
	for _, n := range []string{"etcd", "containerd", "crio", "crictl", "cni"} {
		cached(t, n)
	}
	// Short: containerd's shim sockets live under it.
	dir, err := os.MkdirTemp("", "k8s-")
	if err != nil {
		t.Fatal(err)
	}
	c.Work = dir
	c.helmDir = filepath.Join(dir, "helm")
	script := filepath.Join(repoRoot(t), "test", "k8s", "cluster.sh")
	env := append(os.Environ(), "KWORK="+dir, "KIMAGES="+strings.Join(opts.Images, " "), "KFORKER="+opts.Forker, "KREGISTRY="+opts.Registry,
		"KWRAPPER="+c.WrapperPath(), "KWRAPPER_CONFIG="+c.WrapperConfig())
	t.Cleanup(func() {
		if t.Failed() {
			c.dumpLogs()
		}
		cmd := exec.Command("bash", script, "down")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		t.Logf("cluster down: %s", strings.TrimSpace(string(out)))
		if err != nil {
			t.Errorf("cluster down: %v", err)
		}
		if !strings.Contains(string(out), "processes left 0, mounts left 0, kubepods cgroups left 0") {
			t.Errorf("cluster down left something behind: %s", out)
		}
		_ = os.RemoveAll(dir)
	})
	cmd := exec.Command("bash", script, "up", runtime)
	cmd.Env = env
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cluster up %s: %v\n%s", runtime, err, out)
	}
	t.Logf("cluster on %s Ready in %s", runtime, time.Since(start).Round(100*time.Millisecond))
	if !opts.NoRDT {
		c.Kubectl("label", "node", c.Node(), rdtLabel+"=true")
	}
	return c
}

// dumpLogs shows the tails of the daemons' logs of a failed test.
func (c *Cluster) dumpLogs() {
	for _, f := range []string{"k/kubelet.log", "c/containerd.log", "o/crio.log"} {
		b, err := os.ReadFile(filepath.Join(c.Work, f))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		c.t.Logf("--- %s (tail)\n%s", f, strings.Join(lines, "\n"))
	}
}

func (c *Cluster) env() []string {
	return append(helmEnv(c.helmDir), "KUBECONFIG="+c.Kubeconfig())
}

// Kubeconfig is the admin's kubeconfig.
func (c *Cluster) Kubeconfig() string { return filepath.Join(c.Work, "cp", "admin.kubeconfig") }

// run runs a command with the cluster's environment and stdin; stdout, and an error with stderr.
func (c *Cluster) run(stdin, bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = c.env()
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", filepath.Base(bin), strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Kubectl runs kubectl and fails the test if it fails.
func (c *Cluster) Kubectl(args ...string) string {
	c.t.Helper()
	out, err := c.run("", c.kubectl, args...)
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

// TryKubectl runs kubectl; its error is the caller's.
func (c *Cluster) TryKubectl(args ...string) (string, error) {
	return c.run("", c.kubectl, args...)
}

// Apply applies manifests given as YAML.
func (c *Cluster) Apply(manifest string) {
	c.t.Helper()
	if _, err := c.run(manifest, c.kubectl, "apply", "-f", "-"); err != nil {
		c.t.Fatal(err)
	}
}

// Helm runs helm and fails the test if it fails.
func (c *Cluster) Helm(args ...string) string {
	c.t.Helper()
	out, err := c.run("", c.helm, args...)
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

// Eventually polls cond until it holds or timeout passes; the last reason is the failure.
func (c *Cluster) Eventually(timeout time.Duration, what string, cond func() (bool, string)) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	var why string
	for {
		var ok bool
		ok, why = cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: not after %s: %s", what, timeout, why)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// ManifestDir is kubelet's static pod directory.
func (c *Cluster) ManifestDir() string { return filepath.Join(c.Work, "k", "manifests") }

// Node is the cluster's one node's name (kubelet registers the host's name).
func (c *Cluster) Node() string {
	c.t.Helper()
	name, err := os.Hostname()
	if err != nil {
		c.t.Fatal(err)
	}
	return strings.ToLower(name)
}
