package inventory_test

import (
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

const pod = "0f8b2c1e-1111-2222-3333-444455556666"

func TestInventory(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{PerfPkgDomains: 1})
	cfg := config.Default()
	cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir = sim.Dir, filepath.Join(t.TempDir(), "state"), ""
	cfg.ResctrlSimulator = true
	// The state dir does not exist yet: the inventory creates nothing.
	if _, err := inventory.Open(cfg, resctrlfs.MountFor(cfg.ResctrlSimulator)); err == nil {
		t.Errorf("opened a state dir that does not exist")
	}
	m, err := lifecycle.New(cfg, slog.New(slog.DiscardHandler), kernel.Open)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Open(cfg, resctrlfs.MountFor(cfg.ResctrlSimulator))
	if err != nil {
		t.Fatal(err)
	}
	st, err := inv.Status()
	b, _ := json.Marshal(st)
	if err != nil || !strings.Contains(string(b), `"groups":[]`) || !strings.Contains(string(b), `"recentFailures":[]`) {
		t.Errorf("empty status: %s, %v", b, err)
	}
	a := map[string]string{identity.CRIOPodUID: pod, identity.CRIOSandboxID: strings.Repeat("a", 64),
		identity.CRIOContainerType: "container", identity.CRIOPodNamespace: "shop", identity.CRIOPodName: "cart",
		identity.CRIOContainerName: "app"}
	idn, err := identity.FromAnnotations("c1", a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Place(lifecycle.Placement{ContainerID: "c1", Pid: os.Getpid(), Pod: idn, Annotations: a}); err != nil {
		t.Fatal(err)
	}
	pods, err := inv.Pods(inventory.Options{Tasks: true, Counters: true})
	if err != nil || len(pods) != 1 {
		t.Fatalf("pods: %+v, %v", pods, err)
	}
	p := pods[0]
	if p.PodUID != pod || p.Namespace != "shop" || p.PodName != "cart" || p.State != inventory.Active || p.Tasks < 1 ||
		len(p.Containers) != 1 || p.Containers[0].Cgroup == "" || p.Containers[0].Name != "app" || len(p.Readings) == 0 {
		t.Errorf("pod: %+v", p)
	}
	var energy bool
	for _, r := range p.Readings {
		energy = energy || (r.Name == "core_energy" && r.Cumulative && r.Unit == "J")
	}
	if !energy {
		t.Errorf("no AET energy reading: %+v", p.Readings)
	}
	// A container whose init is gone, with no departure (CRI-O stops without poststop; a
	// failed start gets none), is stopped, not active.
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	const pod2 = "11111111-2222-3333-4444-555555555555"
	a2 := map[string]string{identity.CRIOPodUID: pod2, identity.CRIOSandboxID: strings.Repeat("b", 64), identity.CRIOContainerType: "container"}
	idn2, _ := identity.FromAnnotations("c2", a2)
	if _, err := m.Place(lifecycle.Placement{ContainerID: "c2", Pid: sleeper.Process.Pid, Pod: idn2, Annotations: a2}); err != nil {
		t.Fatal(err)
	}
	_ = sleeper.Process.Kill()
	_ = sleeper.Wait()
	pods, _ = inv.Pods(inventory.Options{})
	for _, p := range pods {
		if p.PodUID == pod2 && p.State != inventory.Stopped {
			t.Errorf("a pod whose only container's init is gone: %s", p.State)
		}
		if p.PodUID == pod2 && (len(p.Containers) != 1 || p.Containers[0].Name != "") {
			t.Errorf("a container with no name in its annotations: %+v", p.Containers)
		}
	}
	// Move the test process back out, or the group would keep it.
	if err := os.WriteFile(filepath.Join(sim.Dir, "tasks"), []byte("0"), 0o644); err != nil {
		t.Log(err)
	}
}
