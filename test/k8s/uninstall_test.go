package k8s

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// uninstall: `helm uninstall` runs the chart's cleanup (a post-delete hook) on the node. Where
// the runtime's config still names the wrapper (containerd here), the node keeps everything,
// the uninstall says why, and pods of the wrapper's RuntimeClass still start, exec and stop;
// once the operator has taken the handler out of the config, the cleanup finishes. Either
// way nothing of ours is left in the end, and the workloads run on.
func (s *scenario) uninstall(wl *workloads) {
	t := s.t
	if s.wrapper() {
		s.uninstallRefused()
	} else {
		s.Helm("uninstall", release, "--namespace", namespace, "--wait", "--timeout", "300s")
	}
	s.Eventually(60*time.Second, "the DaemonSet's pods gone", func() (bool, string) {
		pods, err := s.PodsOf(namespace, "app.kubernetes.io/name=resctrl-mon")
		return err == nil && len(pods) == 0, fmt.Sprintf("%d pods, %v", len(pods), err)
	})
	for _, p := range []string{s.hookPath, s.hookConfig, s.WrapperPath(), filepath.Join(s.hooksDir, "resctrl-mon-createruntime.json"), filepath.Join(s.hooksDir, "resctrl-mon-poststop.json")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("after helm uninstall, %s is still on the node (%v)", p, err)
		}
	}
	// Every group resctrl-mon made is released: no RMID outlives it.
	for _, uid := range []string{wl.staticUID, wl.quitter.UID, wl.late.UID} {
		if _, err := os.Stat(filepath.Join(s.sim.Dir, groupOf(uid))); !os.IsNotExist(err) {
			t.Errorf("after helm uninstall, %s is still there (%v)", groupOf(uid), err)
		}
	}
	left, _ := os.ReadDir(filepath.Join(s.sim.Dir, "mon_groups"))
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	if len(names) > 0 {
		t.Errorf("after helm uninstall (%s): groups left %v", s.mode, names)
	}
	// No object of the release is left in the cluster (the hooks' included).
	for _, ns := range []string{namespace, "default"} {
		out, err := s.TryKubectl("-n", ns, "get", "all,sa,role,rolebinding,cm,secret", "-l", "app.kubernetes.io/instance="+release, "-o", "name")
		if err != nil || strings.TrimSpace(out) != "" {
			t.Errorf("after helm uninstall, objects of the release left in %s: %q %v", ns, out, err)
		}
	}
	// The workloads run on, in the root group.
	s.requireRunning("stat-", wl.static)
}

// uninstallRefused: a pod of the wrapper's RuntimeClass runs, and containerd's config names
// the wrapper as that handler's BinaryName. `helm uninstall` fails, the node keeps everything
// and says so in an Event; the class's pods still exec, start and stop. Then the operator does
// what the message says (pods of the class deleted, the handler taken out of the config), the
// node's cleanup pod tries again, and the failed hook's leftovers are deleted as the docs say.
func (s *scenario) uninstallRefused() {
	t := s.t
	live := s.runningPod("wrapped-live", "resctrl-mon")
	out, err := s.run("", s.helm, "uninstall", release, "--namespace", namespace, "--wait", "--timeout", "300s")
	if err == nil {
		t.Fatalf("helm uninstall succeeded while containerd's config names the wrapper:\n%s", out)
	}
	t.Logf("helm uninstall while the runtime's config names the wrapper: %v", err)
	s.Eventually(60*time.Second, "a ResctrlMonKept event on the node", func() (bool, string) {
		ev, err := s.TryKubectl("-n", "default", "get", "events", "--field-selector", "involvedObject.kind=Node,reason=ResctrlMonKept", "-o", "jsonpath={.items[*].message}")
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(ev, "config.toml") && strings.Contains(ev, s.WrapperPath()), "events: " + ev
	})
	for _, p := range []string{s.WrapperPath(), s.hookPath, s.hookConfig} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("a refused uninstall took %s off the node: %v", p, err)
		}
	}
	// The node still works: the class's pod execs (through the wrapper, still placed) and
	// stops, and a new pod starts. (A new pod of the class is refused by the API server: the
	// RuntimeClass went with the release.)
	s.Kubectl("-n", "default", "exec", live.Name, "--", "/bin/true")
	s.requirePlaced("the wrapper's pod after a refused uninstall", live, live.UID)
	fresh := s.runningPod("fresh", "")
	s.Kubectl("-n", "default", "delete", "pod", live.Name, fresh.Name, "--wait=true", "--timeout=60s")

	// What the operator does (docs/operations/uninstall.md): the handler out of the config
	// (the pods of its class are gone), then the node's cleanup by hand, the command the
	// cleanup pod ran, and the failed Job (kept for its log) deleted.
	cfg := filepath.Join(s.Work, "c", "config.toml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runc := strings.Replace(string(b), fmt.Sprintf("BinaryName = %q", s.WrapperPath()), `BinaryName = "runc"`, 1)
	if runc == string(b) {
		t.Fatalf("%s does not name the wrapper as a BinaryName", cfg)
	}
	if err := os.WriteFile(cfg, []byte(runc), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(repoRoot(t), "bin", "resctrl-mon"),
		"--resctrlRoot="+s.sim.Dir, "--resctrlSimulator=true", "--stateDir="+s.state, "--snapshotDir="+filepath.Join(s.state, "snapshots"),
		"host", "uninstall", "--release-groups", "--wait-placers=60s",
		"--hook-path="+s.hookPath, "--hooks-dir="+s.hooksDir, "--config-path="+s.hookConfig, "--runtime-config="+cfg)
	byHand, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the cleanup by hand: %v\n%s", err, byHand)
	}
	t.Logf("the cleanup by hand once the handler was gone:\n%s", byHand)
	s.Kubectl("-n", namespace, "delete", "job", "-l", "app.kubernetes.io/instance="+release+",app.kubernetes.io/component=cleanup-wait", "--wait=true")
}

// runningPod starts a pod (of runtimeClass, if named) and waits for it to run.
func (s *scenario) runningPod(name, runtimeClass string) Pod {
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
	return p
}
