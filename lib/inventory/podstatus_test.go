package inventory_test

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// One pod's group, found by its UID or its namespace/name: its containers, tasks and
// counters, the life its snapshots record, and the failures recorded about it (a container
// of it whose init was gone), not another pod's.
func TestPodStatus(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	cfg := config.Default()
	dir := t.TempDir()
	cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir = sim.Dir, filepath.Join(dir, "state"), filepath.Join(dir, "snapshots")
	cfg.ResctrlSimulator = true
	m, err := lifecycle.New(cfg, slog.New(slog.DiscardHandler), kernel.Open)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.WriteFile(filepath.Join(sim.Dir, "tasks"), []byte("0"), 0o644) })
	place := func(id, uid, name string, pid int) error {
		a := map[string]string{identity.CRIOPodUID: uid, identity.CRIOSandboxID: strings.Repeat(uid[:1], 64),
			identity.CRIOContainerType: "container", identity.CRIOPodNamespace: "shop", identity.CRIOPodName: name,
			identity.CRIOContainerName: "app"}
		idn, err := identity.FromAnnotations(id, a)
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Place(lifecycle.Placement{ContainerID: id, Pid: pid, Pod: idn, Annotations: a})
		return err
	}
	const other = "22222222-3333-4444-5555-666666666666"
	if err := place("o1", other, "till", sleeper(t)); err != nil {
		t.Fatal(err)
	}
	if err := place("c1", pod, "cart", os.Getpid()); err != nil {
		t.Fatal(err)
	}
	// A container of the pod whose tasks write fails, and one of the other pod: a failure each.
	for id, uid := range map[string]string{"c9": pod, "o9": other} {
		sim.FailNext(resctrlsim.OpTasksWrite, 1, syscall.EIO)
		name := map[string]string{pod: "cart", other: "till"}[uid]
		if err := place(id, uid, name, sleeper(t)); err == nil {
			t.Fatalf("%s placed through a failing tasks write", id)
		}
	}
	inv, err := inventory.Open(cfg, resctrlfs.MountFor(cfg.ResctrlSimulator))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{pod, "shop/cart"} {
		st, err := inv.PodStatus(q, cfg.SnapshotDir)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if st.Pod.PodUID != pod || st.Pod.Tasks < 1 || len(st.Pod.Readings) == 0 || len(st.Pod.Containers) != 1 {
			t.Errorf("%s: pod %+v", q, st.Pod)
		}
		if len(st.Lives) != 1 || st.Lives[0].Ended || !st.Lives[0].Began.Equal(st.Pod.Created) {
			t.Errorf("%s: lives %+v, want the one begun at %s, not ended", q, st.Lives, st.Pod.Created)
		}
		if len(st.Failures) == 0 {
			t.Errorf("%s: no failure, want c9's", q)
		}
		for _, f := range st.Failures {
			if f.Subject != "c9" {
				t.Errorf("%s: failure of another container: %+v", q, f)
			}
		}
	}
	for _, q := range []string{"", "shop/none", "33333333-0000-0000-0000-000000000000", "cart"} {
		if _, err := inv.PodStatus(q, cfg.SnapshotDir); !errors.Is(err, inventory.ErrNoSuchPod) {
			t.Errorf("%q: %v, want ErrNoSuchPod", q, err)
		}
	}
}

// sleeper is a process of the test's that a container's init stands for.
func sleeper(t *testing.T) int {
	t.Helper()
	p := exec.Command("sleep", "60")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Process.Kill(); _ = p.Wait() })
	return p.Process.Pid
}
