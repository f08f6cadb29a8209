package k8s

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
)

// A container that forks children and threads the moment it starts (test/e2e/forker,
// copied into the test image as /bin/forker).
const forkerContainer = `
      - name: %s
        image: localhost/busybox:k8s
        imagePullPolicy: Never
        command: ["/bin/forker"]`

// workloads are the pods the scenario watches throughout.
type workloads struct {
	web     Pod // a Deployment's pod of two forking containers
	quitter Pod // a pod whose second container exits every few seconds (restartPolicy Always)
	static  Pod // the mirror pod of a static pod
	// staticUID is the static pod's own UID (kubelet's config hash), which names its cgroup
	// and its group; the mirror pod's UID is another.
	staticUID string
	late      Pod // a pod started while the DaemonSet's pod was being replaced
}

func (s *scenario) workloads() *workloads {
	s.Apply(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      hostNetwork: true
      terminationGracePeriodSeconds: 2
      containers:` + fmt.Sprintf(forkerContainer, "a") + fmt.Sprintf(forkerContainer, "b") + `
---
apiVersion: v1
kind: Pod
metadata: {name: quitter, namespace: default}
spec:
  hostNetwork: true
  restartPolicy: Always
  terminationGracePeriodSeconds: 1
  containers:
  - name: sleeper
    image: localhost/busybox:k8s
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
  - name: quitter
    image: localhost/busybox:k8s
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", "sleep 2; exit 3"]
`)
	s.Kubectl("-n", "default", "rollout", "status", "deploy/web", "--timeout=120s")
	wl := &workloads{}
	wl.web = s.onePod("default", "app=web")
	s.waitForker(wl.web, "a", "b")
	s.requirePlaced("Deployment web", wl.web, wl.web.UID)
	// The pod as it is once its sleeper runs: requirePlaced reads the containers of this
	// copy, and a copy taken before the sleeper ran would name none of its tasks, ever.
	s.Eventually(60*time.Second, "pod quitter's sleeper running", func() (bool, string) {
		var err error
		if wl.quitter, err = s.GetPod("default", "quitter"); err != nil {
			return false, err.Error()
		}
		for _, c := range wl.quitter.Containers {
			if c.Name == "sleeper" {
				return c.Running, "not running"
			}
		}
		return false, "no container sleeper"
	})
	return wl
}

// onePod is the one pod a selector names, once it runs.
func (s *scenario) onePod(ns, selector string) Pod {
	var p Pod
	s.Eventually(60*time.Second, "one running pod "+selector, func() (bool, string) {
		pods, err := s.PodsOf(ns, selector)
		if err != nil {
			return false, err.Error()
		}
		if len(pods) != 1 {
			return false, fmt.Sprintf("%d pods", len(pods))
		}
		p = pods[0]
		for _, c := range p.Containers {
			if !c.Running {
				return false, c.Name + " not running"
			}
		}
		return len(p.Containers) > 0, "no container status"
	})
	return p
}

// waitForker waits for the forker containers to have made every child and thread.
func (s *scenario) waitForker(p Pod, names ...string) {
	for _, n := range names {
		s.Eventually(60*time.Second, p.Name+"/"+n+" ready", func() (bool, string) {
			out, err := s.TryKubectl("-n", p.Namespace, "logs", p.Name, "-c", n)
			if err != nil {
				return false, err.Error()
			}
			return strings.Contains(out, "ready"), "log: " + out
		})
	}
}

// requirePlaced fails unless every thread of the pod's named containers is in its group.
func (s *scenario) requirePlaced(what string, p Pod, cgroupUID string, names ...string) Placement {
	s.t.Helper()
	var pl Placement
	s.Eventually(20*time.Second, what+": every task in its group", func() (bool, string) {
		var err error
		pl, err = Placed(s.sim.Dir, p, cgroupUID, names...)
		if err != nil {
			return false, err.Error()
		}
		return pl.Total > 0 && pl.Placed == pl.Total, fmt.Sprintf("%s, missing %v", pl, pl.Missing)
	})
	s.t.Logf("%s (%s, %s): %s", what, s.mode, s.Runtime, pl)
	return pl
}

// staticPod: kubelet runs a pod from a manifest file under a 32-hex UID (its config hash)
// and shows it in the API as a mirror pod with a dashed UID of its own. The group is named
// by the canonical dashed form of the pod's own UID (what Kepler's passive mode reads), and
// the mirror pod gets no second group.
func (s *scenario) staticPod(wl *workloads) {
	t := s.t
	manifest := `apiVersion: v1
kind: Pod
metadata: {name: stat, namespace: default, labels: {app: stat}}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:` + fmt.Sprintf(forkerContainer, "main") + "\n"
	if err := os.WriteFile(filepath.Join(s.ManifestDir(), "stat.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	wl.static = s.onePod("default", "app=stat")
	wl.staticUID = wl.static.Annotations["kubernetes.io/config.mirror"]
	if len(wl.staticUID) != 32 || wl.staticUID == wl.static.UID {
		t.Fatalf("static pod: mirror annotation %q, mirror UID %s: want the 32-hex config hash", wl.staticUID, wl.static.UID)
	}
	s.waitForker(wl.static, "main")
	s.requirePlaced("static pod "+groupOf(wl.staticUID), wl.static, wl.staticUID)
	if _, err := os.Stat(filepath.Join(s.sim.Dir, groupOf(wl.static.UID))); err == nil {
		t.Errorf("the mirror pod's UID %s has a group of its own", wl.static.UID)
	}
}

// execs: what an exec liveness probe and `kubectl exec` of a process that forks start in a
// running container. Neither NRI nor a createRuntime hook sees an exec: without the runtime
// wrapper these are not placed (counted here, N of M). A pod of the chart's RuntimeClass runs
// through the wrapper, and every one of them is placed from its first instruction.
func (s *scenario) execs(wl *workloads) {
	s.execsIn("probed", "", func(what string, pl Placement) {
		s.t.Logf("%s (%s, %s): %s (not placed without the runtime wrapper)", what, s.mode, s.Runtime, pl)
	})
	if !s.wrapper() {
		return
	}
	s.execsIn("wrapped", "resctrl-mon", func(what string, pl Placement) {
		s.t.Logf("%s through the wrapper's RuntimeClass (%s, %s): %s", what, s.mode, s.Runtime, pl)
		if pl.Placed != pl.Total {
			s.t.Errorf("%s through the wrapper: %s, missing %v", what, pl, pl.Missing)
		}
	})
}

// execsIn runs a pod whose exec probe forks, execs a forking shell into it, and hands check
// what was placed while each ran.
func (s *scenario) execsIn(name, runtimeClass string, check func(what string, pl Placement)) {
	t := s.t
	rc := ""
	if runtimeClass != "" {
		rc = "  runtimeClassName: " + runtimeClass + "\n"
	}
	s.Apply(`apiVersion: v1
kind: Pod
metadata: {name: ` + name + `, namespace: default}
spec:
` + rc + `  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: localhost/busybox:k8s
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    livenessProbe:
      exec: {command: ["/bin/sh", "-c", "sleep 3 & sleep 3 & wait"]}
      periodSeconds: 4
      timeoutSeconds: 5
`)
	var p Pod
	s.Eventually(60*time.Second, "pod "+name+" running", func() (bool, string) {
		var err error
		p, err = s.GetPod("default", name)
		if err != nil {
			return false, err.Error()
		}
		return len(p.Containers) == 1 && p.Containers[0].Running, "not running"
	})
	s.requirePlaced("pod "+name+" before any exec", p, p.UID)
	// The probe's processes come and go every 4 s; look while they run.
	var probe Placement
	s.Eventually(30*time.Second, "an exec probe's processes in "+name, func() (bool, string) {
		pl, err := Placed(s.sim.Dir, p, p.UID)
		if err != nil {
			return false, err.Error()
		}
		probe = pl
		return pl.Total >= 4, pl.String()
	})
	check("exec liveness probe", probe)
	cmd := exec.Command(s.kubectl, "-n", "default", "exec", name, "--", "/bin/sh", "-c", "sleep 6 & sleep 6 & sleep 6 & wait")
	cmd.Env = s.env()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var ex Placement
	s.Eventually(20*time.Second, "kubectl exec's processes in "+name, func() (bool, string) {
		pl, err := Placed(s.sim.Dir, p, p.UID)
		if err != nil {
			return false, err.Error()
		}
		ex = pl
		return pl.Total >= 6, pl.String()
	})
	_ = cmd.Wait()
	check("kubectl exec of a forking shell", ex)
	s.Kubectl("-n", "default", "delete", "pod", name, "--wait=false")
}

// groupState is what must survive the DaemonSet's pod going and coming back: each watched
// pod's group and the RMID it holds.
type groupState map[string]int

func (s *scenario) groups(wl *workloads) groupState {
	g := groupState{}
	for _, uid := range []string{wl.web.UID, wl.staticUID, wl.quitter.UID} {
		path := groupOf(uid)
		rmid := s.sim.RMID(path)
		if rmid < 0 {
			s.t.Fatalf("pod %s has no group %s", uid, path)
		}
		g[path] = rmid
	}
	return g
}

// requireSame fails unless every group is still there with the same RMID, and every task of
// the watched pods still in it.
func (s *scenario) requireSame(what string, wl *workloads, before groupState) {
	t := s.t
	now := s.groups(wl)
	for path, rmid := range before {
		if now[path] != rmid {
			t.Errorf("%s: %s holds RMID %d, had %d", what, path, now[path], rmid)
		}
	}
	s.requirePlaced(what+": Deployment web", wl.web, wl.web.UID)
	s.requirePlaced(what+": static pod", wl.static, wl.staticUID)
}

func (s *scenario) daemonPod() Pod {
	return s.onePod(namespace, "app.kubernetes.io/name=resctrl-mon")
}

// replaceDaemonPod deletes the DaemonSet's pod, as `kubectl delete pod` would during a node
// drain, and starts a pod while none of ours runs: groups, RMIDs and tasks survive, and the
// pod started meanwhile is placed once ours is back (Synchronize or reconcile).
func (s *scenario) replaceDaemonPod(wl *workloads, before groupState) {
	old := s.daemonPod()
	s.Kubectl("-n", namespace, "delete", "pod", old.Name, "--wait=true", "--timeout=60s")
	s.Apply(`apiVersion: v1
kind: Pod
metadata: {name: late, namespace: default}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:` + fmt.Sprintf(forkerContainer, "main") + "\n")
	s.Kubectl("-n", namespace, "rollout", "status", "ds/"+daemonSet, "--timeout=120s")
	if p := s.daemonPod(); p.UID == old.UID {
		s.t.Fatalf("the DaemonSet's pod %s was not replaced", old.Name)
	}
	var err error
	s.Eventually(60*time.Second, "pod late running", func() (bool, string) {
		wl.late, err = s.GetPod("default", "late")
		if err != nil {
			return false, err.Error()
		}
		return len(wl.late.Containers) == 1 && wl.late.Containers[0].Running, "not running"
	})
	s.waitForker(wl.late, "main")
	s.requirePlaced("pod started while the DaemonSet's pod was replaced", wl.late, wl.late.UID)
	s.requireSame("after kubectl delete pod of the DaemonSet's pod", wl, before)
}

// upgrade is `helm upgrade` to a new image while the workloads run.
func (s *scenario) upgrade(wl *workloads, before groupState) {
	s.Helm("upgrade", release, chartRef(s.registry), "--version", chartVersion("test2"), "--plain-http",
		"--namespace", namespace, "-f", s.writeValues("test2"), "--wait", "--timeout", "120s")
	s.Kubectl("-n", namespace, "rollout", "status", "ds/"+daemonSet, "--timeout=120s")
	s.Eventually(60*time.Second, "the DaemonSet's pod on image test2", func() (bool, string) {
		out, err := s.TryKubectl("-n", namespace, "get", "pods", "-l", "app.kubernetes.io/name=resctrl-mon", "-o", "jsonpath={.items[*].spec.containers[*].image}")
		return err == nil && strings.Contains(out, ":test2") && !strings.Contains(out, ":test1"), out
	})
	s.requireSame("after helm upgrade to image test2", wl, before)
}

// prometheus scrapes the DaemonSet's exporter found through Kubernetes service discovery
// against the test's API server, its targets relabelled to loopback.
func (s *scenario) prometheus(wl *workloads) {
	t := s.t
	pki := filepath.Join(s.Work, "cp", "pki")
	jobs := fmt.Sprintf(`  - job_name: resctrl-mon
    kubernetes_sd_configs:
      - role: pod
        api_server: https://127.0.0.1:6443
        tls_config: {ca_file: %[1]s/ca.crt, cert_file: %[1]s/admin.crt, key_file: %[1]s/admin.key}
        namespaces: {names: [%[2]s]}
    relabel_configs:
      - source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_scrape]
        regex: "true"
        action: keep
      # As the docs' job: only the port named metrics, not one port-less target per container.
      - source_labels: [__meta_kubernetes_pod_container_port_name]
        regex: metrics
        action: keep
      # The pods use the node's network; the test reaches it on loopback only.
      - source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_port]
        regex: (.+)
        replacement: 127.0.0.1:$1
        target_label: __address__
      - source_labels: [__meta_kubernetes_pod_node_name]
        target_label: node
`, pki, namespace)
	p := e2e.StartPrometheusWith(t, filepath.Join(cached(t, "prometheus"), "prometheus"), jobs)
	for _, q := range []string{
		fmt.Sprintf(`resctrl_mon_pod_info{namespace="default",pod=%q,pod_uid=%q}`, wl.web.Name, wl.web.UID),
		fmt.Sprintf(`{__name__=~"resctrl_mon_.*bytes.*",namespace="default",pod=%q}`, wl.web.Name),
		`up{job="resctrl-mon",node!=""}`,
		// The pressure of a container queried by its Kubernetes name, as cAdvisor's series are.
		fmt.Sprintf(`resctrl_mon_pressure_cpu_waiting_seconds_total{namespace="default",pod=%q,container="a",container_id=~"[0-9a-f]{64}"}`, wl.web.Name),
	} {
		s.Eventually(60*time.Second, "Prometheus: "+q, func() (bool, string) {
			res, err := p.Query(q)
			if err != nil {
				return false, err.Error()
			}
			return len(res) > 0, "no series"
		})
	}
	t.Logf("Prometheus (%s, %s) found the exporter through Kubernetes service discovery: %s's series carry its name and namespace", s.mode, s.Runtime, wl.web.Name)
}

// restarts: the quitter container has exited and been restarted by kubelet several times
// since the pod started: the pod kept one group and one RMID throughout.
func (s *scenario) restarts(wl *workloads) {
	t := s.t
	first := s.sim.RMID(groupOf(wl.quitter.UID))
	s.Eventually(120*time.Second, "quitter restarted twice", func() (bool, string) {
		p, err := s.GetPod("default", "quitter")
		if err != nil {
			return false, err.Error()
		}
		for _, c := range p.Containers {
			if c.Name == "quitter" {
				return c.RestartCount >= 2, fmt.Sprintf("restartCount %d", c.RestartCount)
			}
		}
		return false, "no status of quitter"
	})
	p, err := s.GetPod("default", "quitter")
	if err != nil {
		t.Fatal(err)
	}
	if now := s.sim.RMID(groupOf(p.UID)); now != first || now < 0 {
		t.Errorf("pod quitter held RMID %d, now %d, across its container's restarts", first, now)
	}
	begins, _ := filepath.Glob(filepath.Join(s.state, "snapshots", strings.TrimPrefix(groupOf(p.UID), "mon_groups/")+".*begin"))
	if len(begins) != 1 {
		t.Errorf("pod quitter: %d begin snapshots (%v), want 1: its group was made again", len(begins), begins)
	}
	s.requirePlaced("pod quitter's sleeper after its sibling's restarts", p, p.UID, "sleeper")
}

// gracefulDeletion deletes the Deployment: its pod's group is gone after the retention
// window (5 s here), and its .end snapshot is written.
func (s *scenario) gracefulDeletion(wl *workloads) {
	s.Kubectl("-n", "default", "delete", "deployment", "web", "--wait=true", "--timeout=60s")
	s.Eventually(60*time.Second, "pod web deleted", func() (bool, string) {
		pods, err := s.PodsOf("default", "app=web")
		return err == nil && len(pods) == 0, fmt.Sprintf("%d pods, %v", len(pods), err)
	})
	dir := filepath.Join(s.sim.Dir, groupOf(wl.web.UID))
	s.Eventually(60*time.Second, "the deleted pod's group removed after retention", func() (bool, string) {
		_, err := os.Stat(dir)
		return os.IsNotExist(err), fmt.Sprintf("%s: %v", dir, err)
	})
	ends, _ := filepath.Glob(filepath.Join(s.state, "snapshots", strings.TrimPrefix(groupOf(wl.web.UID), "mon_groups/")+".*end"))
	if len(ends) != 1 {
		s.t.Errorf("deleted pod web: %d end snapshots, want 1", len(ends))
	}
}

// requireRunning fails unless the pod's containers still run.
func (s *scenario) requireRunning(what string, p Pod) {
	s.t.Helper()
	now, err := s.GetPod(p.Namespace, p.Name)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, c := range now.Containers {
		if !c.Running {
			s.t.Errorf("%s: container %s of pod %s is not running after the uninstall", what, c.Name, p.Name)
		}
	}
}
