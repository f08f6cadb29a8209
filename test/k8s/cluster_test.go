package k8s

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

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
	// paths on the node
	state, hookPath, hooksDir, hookConfig string
}

func TestKubernetesContainerdNRI(t *testing.T) { runScenario(t, "containerd", "nri") }

func TestKubernetesCRIOHooks(t *testing.T) { runScenario(t, "crio", "hooks") }

func runScenario(t *testing.T, runtime, mode string) {
	buildImages(t)
	sim := resctrlsim.MountT(t, resctrlsim.Options{NumRMIDs: 64})
	c := StartCluster(t, runtime, ClusterOptions{Images: []string{images.test1, images.test2}, Forker: images.forker})
	s := &scenario{Cluster: c, mode: mode, sim: sim, state: filepath.Join(c.Work, "state")}
	host := filepath.Join(c.Work, "host")
	s.hookPath = filepath.Join(host, "libexec", "resctrl-mon-hook")
	s.hooksDir = filepath.Join(c.Work, "o", "hooks.d")
	s.hookConfig = c.WrapperConfig()

	s.install("test1")
	wl := s.workloads()
	s.staticPod(wl)
	s.execs(wl)
	before := s.groups(wl)
	s.replaceDaemonPod(wl, before)
	s.upgrade(wl, before)
	s.prometheus(wl)
	s.restarts(wl)
	s.gracefulDeletion(wl)
	s.uninstall(wl)
}

// values are the chart's values for this node: its simulator, state dir, sockets and paths.
func (s *scenario) values(tag string) string {
	runtimeRoot := filepath.Join(s.Work, "c", "runc", "*")
	if s.Runtime == "crio" {
		runtimeRoot = filepath.Join(s.Work, "o", "runc")
	}
	priority := "system-node-critical"
	if s.Runtime == "crio" {
		// kubelet gives a node-critical pod oom_score_adj -997, which root without
		// CAP_SYS_RESOURCE (this VM) may not set; containerd clamps it
		// (restrict_oom_score_adj), CRI-O has no such setting.
		priority = ""
	}
	return fmt.Sprintf(`mode: %s
priorityClassName: %q
image: {repository: localhost/resctrl-mon, tag: %s, pullPolicy: Never}
config:
  resctrlRoot: %s
  stateDir: %s
  snapshotDir: %s/snapshots
  retention: 5s
  runtimeRoots: [%q]
wrapper: {enabled: %t, path: %s}
nri:
  socket: %s
  sweepEvery: 2s
hooks:
  hookPath: %s
  hooksDir: %s
  configPath: %s
  log: file:%s/hook.log
  reconcileEvery: 2s
# This VM's mounts are private: HostToContainer would be refused.
resctrlMountPropagation: None
# No kube-proxy on this node: the service network does not reach host-network pods.
kubernetesAPI: https://127.0.0.1:6443
exporter:
  listen: 127.0.0.1:%d
  port: %d
`, s.mode, priority, tag, s.sim.Dir, s.state, s.state, runtimeRoot, s.wrapper(), s.WrapperPath(),
		filepath.Join(s.Work, "c", "nri", "nri.sock"),
		s.hookPath, s.hooksDir, s.hookConfig, s.state, metricsPort, metricsPort)
}

// wrapper: the runtime wrapper's RuntimeClass is tested on containerd, which checks a
// handler's binary only when a pod uses it. CRI-O refuses to start with a runtime_path that
// does not exist yet (docs/install/kubernetes.md says how to add it after the chart).
func (s *scenario) wrapper() bool { return s.Runtime == "containerd" }

func (s *scenario) writeValues(tag string) string {
	p := filepath.Join(s.Work, "values-"+tag+".yaml")
	if err := os.WriteFile(p, []byte(s.values(tag)), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return p
}

func (s *scenario) install(tag string) {
	t := s.t
	start := time.Now()
	s.Helm("install", release, chartDir(t), "--namespace", namespace, "--create-namespace",
		"-f", s.writeValues(tag), "--wait", "--timeout", "120s")
	s.Kubectl("-n", namespace, "rollout", "status", "ds/"+daemonSet, "--timeout=120s")
	t.Logf("helm install (%s, %s): DaemonSet Ready in %s", s.mode, s.Runtime, time.Since(start).Round(100*time.Millisecond))
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
