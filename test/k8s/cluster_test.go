package k8s

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/registrytest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

const (
	release   = "rm"
	namespace = "resctrl-mon"
	daemonSet = "rm-resctrl-mon"
	// The exporter's loopback port on the node (hostNetwork).
	metricsPort = 19532
)

// images are the project's image built twice (tags test1 and test2, for the upgrade), and
// the forker workload, made once per test binary.
var images struct {
	once         sync.Once
	err          error
	dir          string
	test1, test2 string
	forker       string
}

func buildImages(t *testing.T) {
	t.Helper()
	images.once.Do(func() {
		images.dir, images.err = os.MkdirTemp("", "k8s-img-")
		if images.err != nil {
			return
		}
		root := repoRoot(t)
		for _, tag := range []string{"test1", "test2"} {
			out := filepath.Join(images.dir, tag+".oci.tar")
			cmd := exec.Command("make", "-C", root, "--no-print-directory", "image", "VERSION="+tag, "IMAGE="+out)
			if b, err := cmd.CombinedOutput(); err != nil {
				images.err = fmt.Errorf("make image VERSION=%s: %w\n%s", tag, err, b)
				return
			}
		}
		images.test1 = filepath.Join(images.dir, "test1.oci.tar")
		images.test2 = filepath.Join(images.dir, "test2.oci.tar")
		images.forker = filepath.Join(images.dir, "forker")
		cmd := exec.Command("go", "build", "-o", images.forker, "./test/e2e/forker")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			images.err = fmt.Errorf("build forker: %w\n%s", err, b)
		}
	})
	if images.err != nil {
		t.Fatal(images.err)
	}
}

// scenario is what both modes go through, as an operator would: install, workloads, the
// kubelet's own behaviours, the DaemonSet's pod replaced and upgraded, Prometheus, uninstall.
type scenario struct {
	*Cluster
	mode string
	sim  *resctrlsim.Sim
	// registry (host:port) holds the chart and the image; the node pulls from it
	registry string
	// paths on the node
	state, hookPath, hooksDir, hookConfig string
}

func TestKubernetesContainerdNRI(t *testing.T) { runScenario(t, "containerd", "nri") }

func TestKubernetesCRIOHooks(t *testing.T) { runScenario(t, "crio", "hooks") }

func runScenario(t *testing.T, runtime, mode string) {
	buildImages(t)
	reg := registrytest.Start(t)
	publish(t, reg.Addr, images.test1, "test1")
	publish(t, reg.Addr, images.test2, "test2")
	s := newScenario(t, runtime, mode, reg.Addr)

	s.podSecurity()
	s.install("test1")
	wl := s.workloads()
	s.staticPod(wl)
	s.execs(wl)
	s.kubectlPlugin(wl)
	s.podEvents()
	before := s.groups(wl)
	s.replaceDaemonPod(wl, before)
	s.keeps(wl, before)
	s.upgrade(wl, before)
	s.prometheus(wl)
	s.containerNames(wl)
	s.restarts(wl)
	s.gracefulDeletion(wl)
	s.uninstall(wl)
}

// newScenario mounts the resctrl simulator and starts a cluster on runtime whose node pulls
// from registry, the chart to be installed in mode.
func newScenario(t *testing.T, runtime, mode, registry string) *scenario {
	sim := resctrlsim.MountT(t, resctrlsim.Options{NumRMIDs: 64})
	c := StartCluster(t, runtime, ClusterOptions{Forker: images.forker, Registry: registry})
	s := &scenario{Cluster: c, mode: mode, sim: sim, state: filepath.Join(c.Work, "state"), registry: registry}
	host := filepath.Join(c.Work, "host")
	s.hookPath = filepath.Join(host, "libexec", "resctrl-mon-hook")
	s.hooksDir = filepath.Join(c.Work, "o", "hooks.d")
	s.hookConfig = c.WrapperConfig()
	return s
}

// values are the chart's values for this node. Everything else is the chart's default; each
// value here is one these test machines force, with its reason beside it.
func (s *scenario) values() string {
	runtimeRoot := filepath.Join(s.Work, "c", "runc", "*")
	runtimeConfig := filepath.Join(s.Work, "c", "config.toml")
	if s.Runtime == "crio" {
		runtimeRoot = filepath.Join(s.Work, "o", "runc")
		// The cleanup mounts each config's top directory read-only, here /tmp (the cluster's
		// directory), and CRI-O refuses that bind where /tmp holds submounts (the
		// simulator's, the cluster's) and is a private mount. No wrapper runs on this
		// cluster, so nothing is checked here; the check is exercised on containerd's.
		runtimeConfig = ""
	}
	priority := "system-node-critical"
	if s.Runtime == "crio" {
		// kubelet gives a node-critical pod oom_score_adj -997, which root without
		// CAP_SYS_RESOURCE (a VM or container that dropped it) may not set; containerd
		// clamps it (restrict_oom_score_adj), CRI-O has no such setting.
		priority = ""
	}
	return fmt.Sprintf(`# The mode under test (nri is the default).
mode: %s
# CRI-O only: see above.
priorityClassName: %q
# The test's registry on loopback; the tag is the chart's appVersion, as a release has it.
image: {repository: %s}
config:
  # No RDT hardware here: the resctrl simulator.
  resctrlRoot: %s
  resctrlSimulator: true
  # Under the test's directory, so that nothing stays on the host.
  stateDir: %s
  snapshotDir: %s/snapshots
  # Short, so the test sees a deleted pod's group go.
  retention: 5s
  # The test cluster's runc roots are under its directory.
  runtimeRoots: [%q]
# The wrapper is exercised on containerd (see wrapper()); on the node under the test's directory.
wrapper: {enabled: %t, path: %s}
nri:
  # The test cluster's NRI socket.
  socket: %s
  # Short, so the test does not wait on the sweep.
  sweepEvery: 2s
hooks:
  # Under the test's directory, so that nothing stays on the host; the hook's log there too.
  hookPath: %s
  hooksDir: %s
  configPath: %s
  log: file:%s/hook.log
  # Short, so the test does not wait on reconcile.
  reconcileEvery: 2s
# This VM's mounts are private: HostToContainer would be refused.
resctrlMountPropagation: None
# No kube-proxy on this node: the service network does not reach host-network pods.
kubernetesAPI: https://127.0.0.1:6443
exporter:
  # Loopback only on these machines, and a port nothing else here uses.
  host: 127.0.0.1
  port: %d
uninstall:
  # The test cluster's runtime config (the host's /etc/containerd and /etc/crio are not its).
  runtimeConfigs: [%s]
`, s.mode, priority, imageRepository(s.registry), s.sim.Dir, s.state, s.state, runtimeRoot, s.wrapper(), s.WrapperPath(),
		filepath.Join(s.Work, "c", "nri", "nri.sock"),
		s.hookPath, s.hooksDir, s.hookConfig, s.state, metricsPort, quoteIf(runtimeConfig))
}

// wrapper: the runtime wrapper's RuntimeClass is tested on containerd, which checks a
// handler's binary only when a pod uses it. CRI-O refuses to start with a runtime_path that
// does not exist yet (docs/install/kubernetes.md says how to add it after the chart).
func (s *scenario) wrapper() bool { return s.Runtime == "containerd" }

func (s *scenario) writeValues(tag string) string {
	p := filepath.Join(s.Work, "values-"+tag+".yaml")
	if err := os.WriteFile(p, []byte(s.values()), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return p
}

func (s *scenario) install(tag string) { s.installVersion(chartVersion(tag), tag) }

// installVersion installs the chart published as version (values file named after tag).
func (s *scenario) installVersion(version, tag string) {
	t := s.t
	start := time.Now()
	// As an operator installs a release: the chart from the registry, the image pulled by
	// the node's runtime (nothing was loaded into it).
	s.Helm("install", release, chartRef(s.registry), "--version", version, "--plain-http",
		"--namespace", namespace, "--create-namespace", "-f", s.writeValues(tag), "--wait", "--timeout", "120s")
	s.Kubectl("-n", namespace, "rollout", "status", "ds/"+daemonSet, "--timeout=120s")
	t.Logf("helm install %s (%s, %s): DaemonSet Ready in %s", version, s.mode, s.Runtime, time.Since(start).Round(100*time.Millisecond))
	var want []string
	if s.mode == "hooks" || s.wrapper() {
		want = []string{s.hookPath, s.hookConfig}
	}
	if s.mode == "hooks" {
		want = append(want, filepath.Join(s.hooksDir, "resctrl-mon-createruntime.json"), filepath.Join(s.hooksDir, "resctrl-mon-poststop.json"))
	}
	if s.wrapper() {
		want = append(want, s.WrapperPath())
	}
	for _, p := range want {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("the init container did not install %s: %v", p, err)
		}
	}
}

// quoteIf is s quoted for YAML, or nothing when s is empty.
func quoteIf(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf("%q", s)
}
