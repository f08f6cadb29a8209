package inventory_test

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// unified is where this host mounts the cgroup v2 hierarchy (a hybrid host).
const unified = "/sys/fs/cgroup/unified"

// inV2Cgroup starts sleep in the cgroup v2 directory rel (made, with its parents; removed at
// the end) and returns its pid.
func inV2Cgroup(t *testing.T, rel string) int {
	t.Helper()
	dir := filepath.Join(unified, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Skipf("needs a writable cgroup v2 hierarchy at %s (root): %v", unified, err)
	}
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		for d := dir; d != unified; d = filepath.Dir(d) {
			for range 100 {
				if err := os.Remove(d); err == nil || os.IsNotExist(err) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	})
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// A pod's cgroup is the one its runtime named as the pod's, or none: a container with no pod
// (plain runc or podman run, here in a slice of its own) has no pod cgroup, though its
// cgroup's parent is a whole slice whose pressure is everybody's in it.
func TestPodCgroupIsTheRuntimes(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	cfg := config.Default()
	cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir = sim.Dir, filepath.Join(t.TempDir(), "state"), ""
	cfg.ResctrlSimulator = true
	m, err := lifecycle.New(cfg, slog.New(slog.DiscardHandler), kernel.Open)
	if err != nil {
		t.Fatal(err)
	}
	slice := "/resctrl-mon-test-" + strconv.Itoa(os.Getpid()) + ".slice"
	plain := slice + "/plain-1.scope"
	pid := inV2Cgroup(t, plain)
	if _, err := m.Place(lifecycle.Placement{ContainerID: "plain1", Pid: pid, Cgroup: plain}); err != nil {
		t.Fatal(err)
	}
	// A CRI-O pod: its containers' cgroupsPath is the sandbox's cgroup parent and the
	// container's own (testdata of lib/identity: crio-kubelet.json).
	podDir := slice + "/pod-" + pod[:8]
	id := strings.Repeat("c", 64)
	cgroupsPath := podDir + "/crio-" + id
	crioPid := inV2Cgroup(t, cgroupsPath)
	a := map[string]string{identity.CRIOPodUID: pod, identity.CRIOSandboxID: strings.Repeat("a", 64),
		identity.CRIOContainerType: "container", identity.CRIOPodNamespace: "shop", identity.CRIOPodName: "cart"}
	idn, err := identity.FromAnnotations(id, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Place(lifecycle.Placement{ContainerID: id, Pid: crioPid, Pod: idn, Annotations: a, Cgroup: cgroupsPath,
		PodCgroup: identity.PodCgroup(idn, id, cgroupsPath)}); err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Open(cfg, resctrlfs.MountFor(cfg.ResctrlSimulator))
	if err != nil {
		t.Fatal(err)
	}
	pods, err := inv.Pods(inventory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{} // by the pod's container
	for _, p := range pods {
		for _, c := range p.Containers {
			got[c.ID] = p.Cgroup
		}
	}
	if cg := got["plain1"]; cg != "" {
		t.Errorf("a container with no pod has the pod cgroup %q (its slice's)", cg)
	}
	if cg := got[id]; cg != podDir {
		t.Errorf("the CRI-O pod's cgroup is %q, want %q, its sandbox's cgroup parent", cg, podDir)
	}
}
