package k8s

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/registrytest"
)

// The previous release, which an operator upgrades from.
const (
	previousVersion = "0.1.0"
	// previousCommit is the commit the tag v0.1.0 names. CI's clone may carry no tags (a
	// fetch without them), so the tree is built from this hash, which is in every full
	// clone's history; where the tag is there, it must name this commit.
	previousCommit = "ea8ce39b949ec7664847efd43dc198a92a6f1553"
)

// TestKubernetesUpgradeFromPreviousRelease: `helm upgrade` from release 0.1.0 to this tree, and
// `helm rollback` to 0.1.0, while forking pods run and new pods start during each rollover:
// every pod keeps its group, its RMID and its life, every task of every pod is placed, and no
// group outlives its pod. On containerd in mode nri, then on CRI-O in mode hooks.
func TestKubernetesUpgradeFromPreviousRelease(t *testing.T) {
	buildImages(t)
	prevImage, prevChart := buildPrevious(t)
	reg := registrytest.Start(t)
	// As released: the chart's own version, the image under the release's tag.
	publishChart(t, reg.Addr, prevChart, prevImage, previousVersion, previousVersion)
	publish(t, reg.Addr, images.test1, "test1")
	t.Run("containerd-nri", func(t *testing.T) { upgradeFromPrevious(t, "containerd", "nri", reg.Addr) })
	t.Run("crio-hooks", func(t *testing.T) { upgradeFromPrevious(t, "crio", "hooks", reg.Addr) })
}

func upgradeFromPrevious(t *testing.T, runtime, mode, registry string) {
	s := newScenario(t, runtime, mode, registry)

	// The scenario's values are ones 0.1.0's chart accepts too (its values.schema.json):
	// every key they set was already there.
	s.installVersion(previousVersion, previousVersion)
	wl := s.workloads()
	s.staticPod(wl)
	before := s.groups(wl)
	lives := s.lives(before)
	s.requireOnePerPod("with 0.1.0 installed")

	up := s.rollover("helm upgrade from 0.1.0 to this tree", "test1", "upgrade", release, chartRef(s.registry),
		"--version", chartVersion("test1"), "--plain-http", "--namespace", namespace, "-f", s.writeValues("test1"),
		"--wait", "--timeout", "120s")
	s.requireKept("after helm upgrade from 0.1.0", wl, before, lives)
	upBefore, upLives := s.rolledOver(up)

	// Revision 1 is 0.1.0's install.
	back := s.rollover("helm rollback to 0.1.0", previousVersion, "rollback", release, "1", "--namespace", namespace,
		"--wait", "--timeout", "120s")
	s.requireKept("after helm rollback to 0.1.0", wl, before, lives)
	s.requireRolledOver("after helm rollback to 0.1.0", up, upBefore, upLives)

	wl.late = back[0]
	s.uninstall(wl)
}

// buildPrevious builds release 0.1.0's image and returns it with its chart, each from that
// commit's own tree (its Makefile, its install/image/build.sh, its chart), in the test's
// temporary directory.
func buildPrevious(t *testing.T) (image, chart string) {
	t.Helper()
	root := repoRoot(t)
	commit := previousCommit
	if out, err := exec.Command("git", "-C", root, "rev-parse", "--verify", "--quiet", "v"+previousVersion+"^{commit}").Output(); err == nil {
		if tag := strings.TrimSpace(string(out)); tag != previousCommit {
			t.Fatalf("tag v%s is commit %s; previousCommit says %s", previousVersion, tag, previousCommit)
		}
	}
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	if err := os.Mkdir(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := fmt.Sprintf("set -o pipefail; git -C %q archive %s | tar -x -C %q", root, commit, tree)
	if out, err := exec.Command("bash", "-c", archive).CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", commit, err, out)
	}
	image = filepath.Join(dir, previousVersion+".oci.tar")
	start := time.Now()
	// REVISION: the tree is no git checkout, where its Makefile would read it.
	cmd := exec.Command("make", "-C", tree, "--no-print-directory", "image", "VERSION="+previousVersion, "REVISION="+commit, "IMAGE="+image)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make image of %s (%s): %v\n%s", previousVersion, commit, err, out)
	}
	t.Logf("built release %s's image from commit %s in %s", previousVersion, commit, time.Since(start).Round(100*time.Millisecond))
	return image, filepath.Join(tree, "install", "helm", "resctrl-mon")
}

// lives are the .begin snapshots of each group: one per life, named by when it began. A group
// made again (a new RMID, or the same one re-made) begins a new life.
func (s *scenario) lives(g groupState) map[string][]string {
	out := map[string][]string{}
	for path := range g {
		begins, _ := filepath.Glob(filepath.Join(s.state, "snapshots", strings.TrimPrefix(path, "mon_groups/")+".*begin"))
		for _, b := range begins {
			out[path] = append(out[path], filepath.Base(b))
		}
		if len(out[path]) != 1 {
			s.t.Fatalf("%s: begin snapshots %v, want 1", path, out[path])
		}
	}
	return out
}

// requireKept fails unless the watched pods kept group, RMID, life and every task (their
// containers that restart meanwhile included), and every group is one live pod's.
func (s *scenario) requireKept(what string, wl *workloads, before groupState, lives map[string][]string) {
	s.t.Helper()
	s.requireSame(what, wl, before)
	now := s.lives(before)
	for path, l := range lives {
		if !slices.Equal(now[path], l) {
			s.t.Errorf("%s: %s began a new life: snapshots %v, had %v", what, path, now[path], l)
		}
	}
	s.requirePlaced(what+": pod quitter's sleeper", wl.quitter, wl.quitter.UID, "sleeper")
	s.requireOnePerPod(what)
}

// rollover runs helm (an upgrade or a rollback) and, once the DaemonSet's pod is going (the
// rollout has begun: our placer is stopping or gone), starts two forking pods. When helm is
// done, the DaemonSet's pods run image tag, the two pods were created before the new pod was
// Ready, and every task of theirs is placed: a pod that started while no placer ran is placed
// by the new one at its start (NRI's Synchronize, reconcile's first pass) and marked
// late-assigned, as docs/operations/upgrade.md says.
func (s *scenario) rollover(what, tag string, helmArgs ...string) []Pod {
	t := s.t
	old := s.daemonPod()
	cmd := exec.Command(s.helm, helmArgs...)
	cmd.Env = s.env()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	finished := false
	t.Cleanup(func() {
		if !finished {
			_ = cmd.Process.Kill()
			t.Logf("%s killed, the test having ended first: %v", what, <-done)
		}
	})
	wait := func() {
		err := <-done
		finished = true
		if err != nil {
			t.Fatalf("%s: %v\n%s", what, err, out.String())
		}
	}

	s.Eventually(120*time.Second, what+": the DaemonSet's pod "+old.Name+" going", func() (bool, string) {
		select {
		case err := <-done:
			done <- err
			if err != nil {
				wait()
			}
			return false, "helm is done and the pod was never replaced"
		default:
		}
		p, err := s.GetPod(namespace, old.Name)
		if err != nil {
			return strings.Contains(err.Error(), "NotFound"), err.Error()
		}
		return p.UID != old.UID || p.Terminating, "still running"
	})
	began := time.Since(start)
	prefix := map[string]string{"test1": "up", previousVersion: "back"}[tag]
	names := []string{prefix + "-two", prefix + "-one"}
	containers := [][]string{{"a", "b"}, {"main"}}
	s.Apply(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:`+fmt.Sprintf(forkerContainer, "a")+fmt.Sprintf(forkerContainer, "b")+`
---
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:`+fmt.Sprintf(forkerContainer, "main")+"\n", names[0], names[1]))
	wait()
	s.Kubectl("-n", namespace, "rollout", "status", "ds/"+daemonSet, "--timeout=120s")
	t.Logf("%s (%s, %s): the old pod going after %s, DaemonSet rolled in %s", what, s.mode, s.Runtime,
		began.Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond))
	s.Eventually(60*time.Second, what+": the DaemonSet's pod on image "+tag, func() (bool, string) {
		out, err := s.TryKubectl("-n", namespace, "get", "pods", "-l", "app.kubernetes.io/name=resctrl-mon", "-o", "jsonpath={.items[*].spec.containers[*].image}")
		if err != nil {
			return false, err.Error()
		}
		imgs := strings.Fields(out)
		return len(imgs) > 0 && !slices.ContainsFunc(imgs, func(i string) bool { return !strings.HasSuffix(i, ":"+tag) }), out
	})
	ready := s.daemonReadySince()

	var pods []Pod
	for i, n := range names {
		var p Pod
		s.Eventually(60*time.Second, "pod "+n+" running", func() (bool, string) {
			var err error
			p, err = s.GetPod("default", n)
			if err != nil {
				return false, err.Error()
			}
			for _, c := range p.Containers {
				if !c.Running {
					return false, c.Name + " not running"
				}
			}
			return len(p.Containers) > 0, "no container status"
		})
		created := s.createdAt(p)
		// Both times are whole seconds: equal is before.
		if created.After(ready) {
			t.Errorf("%s: pod %s was created at %s, after the new DaemonSet pod was Ready (%s): not during the rollover", what, n, created, ready)
		}
		s.waitForker(p, containers[i]...)
		s.requirePlaced(fmt.Sprintf("%s: pod %s started during the rollover", what, n), p, p.UID)
		t.Logf("%s: pod %s late-assigned: %t (true where it started while no placer ran)", what, n, s.lateAssigned(p))
		pods = append(pods, p)
	}
	return pods
}

// rolledOver is the group state of pods started during a rollover, and their lives.
func (s *scenario) rolledOver(pods []Pod) (groupState, map[string][]string) {
	g := groupState{}
	for _, p := range pods {
		g[groupOf(p.UID)] = s.sim.RMID(groupOf(p.UID))
	}
	return g, s.lives(g)
}

// requireRolledOver: pods started during an earlier rollover kept their groups, RMIDs, lives
// and tasks through this one too.
func (s *scenario) requireRolledOver(what string, pods []Pod, before groupState, lives map[string][]string) {
	now, nowLives := s.rolledOver(pods)
	for _, p := range pods {
		path := groupOf(p.UID)
		if now[path] != before[path] || !slices.Equal(nowLives[path], lives[path]) {
			s.t.Errorf("%s: pod %s's %s holds RMID %d, lives %v; had %d, %v", what, p.Name, path, now[path], nowLives[path], before[path], lives[path])
		}
		s.requirePlaced(what+": pod "+p.Name+" started during the upgrade", p, p.UID)
	}
}

// daemonReadySince is when the DaemonSet's one pod became Ready.
func (s *scenario) daemonReadySince() time.Time {
	out := s.Kubectl("-n", namespace, "get", "pods", "-l", "app.kubernetes.io/name=resctrl-mon",
		"-o", `jsonpath={.items[*].status.conditions[?(@.type=="Ready")].lastTransitionTime}`)
	ts, err := time.Parse(time.RFC3339, strings.TrimSpace(out))
	if err != nil {
		s.t.Fatalf("the DaemonSet's pod's Ready time %q: %v", out, err)
	}
	return ts
}

// createdAt is the pod's creationTimestamp.
func (s *scenario) createdAt(p Pod) time.Time {
	out := s.Kubectl("-n", p.Namespace, "get", "pod", p.Name, "-o", "jsonpath={.metadata.creationTimestamp}")
	ts, err := time.Parse(time.RFC3339, strings.TrimSpace(out))
	if err != nil {
		s.t.Fatalf("pod %s's creationTimestamp %q: %v", p.Name, out, err)
	}
	return ts
}

// lateAssigned says whether the pod's record says (some of) its tasks were placed after they
// had started. Reconcile may move a new pod's tasks before it first saves the record (with
// the flag): the record of a placed pod is waited for.
func (s *scenario) lateAssigned(p Pod) bool {
	path := filepath.Join(s.state, "groups", strings.TrimPrefix(groupOf(p.UID), "mon_groups/")+".json")
	var b []byte
	s.Eventually(20*time.Second, "pod "+p.Name+"'s record", func() (bool, string) {
		var err error
		b, err = os.ReadFile(path)
		return err == nil, fmt.Sprint(err)
	})
	var r struct {
		LateAssigned bool `json:"lateAssigned"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		s.t.Fatalf("pod %s's record %s: %v", p.Name, path, err)
	}
	return r.LateAssigned
}

// requireOnePerPod waits until every monitoring group is a live pod's and every live pod has
// one, each on an RMID of its own: nothing leaked, nothing missing.
func (s *scenario) requireOnePerPod(what string) {
	s.t.Helper()
	var n int
	s.Eventually(60*time.Second, what+": one group per pod", func() (bool, string) {
		want, err := s.podGroups()
		if err != nil {
			return false, err.Error()
		}
		st := s.sim.Status()
		var have []string
		rmids := map[int]bool{}
		for _, g := range st.Groups {
			if g.Kind == "mon" {
				have = append(have, g.Path)
				rmids[g.RMID] = true
			}
		}
		slices.Sort(have)
		n = len(have)
		// RMIDsUsed counts the root group's.
		return slices.Equal(have, want) && len(rmids) == len(have) && st.RMIDsUsed == len(have)+1,
			fmt.Sprintf("groups %v, pods %v, RMIDs used %d", have, want, st.RMIDsUsed)
	})
	s.t.Logf("%s (%s, %s): %d groups, one per pod, each its own RMID", what, s.mode, s.Runtime, n)
}

// podGroups is the group every pod in the cluster should have (a static pod's by its own UID,
// not its mirror's), sorted.
func (s *scenario) podGroups() ([]string, error) {
	out, err := s.TryKubectl("get", "pods", "-A", "-o", "json")
	if err != nil {
		return nil, err
	}
	var l struct {
		Items []struct {
			Metadata struct {
				UID         string
				Annotations map[string]string
			}
			Status struct{ Phase string }
		}
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		return nil, fmt.Errorf("pods JSON: %w", err)
	}
	var groups []string
	for _, p := range l.Items {
		if p.Status.Phase == "Succeeded" || p.Status.Phase == "Failed" {
			continue
		}
		uid := p.Metadata.UID
		if m := p.Metadata.Annotations["kubernetes.io/config.mirror"]; m != "" {
			uid = m
		}
		groups = append(groups, groupOf(uid))
	}
	slices.Sort(groups)
	return groups, nil
}
