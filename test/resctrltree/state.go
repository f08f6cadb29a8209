package resctrltree

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// Created is when State's groups began: a fixed time, so nothing a test derives from it
// depends on when it runs (a pod's age does, from the clock).
var Created = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// The cgroups State's records name (relative to the cgroup2 mount, testdata/cgroup in Proc).
const (
	PodCgroupActive = "/kubepods.slice/kubepods-poda.slice"
	CgroupActive    = PodCgroupActive + "/cri-containerd-a1.scope"
	CgroupPending   = "/kubepods.slice/kubepods-podc.slice/cri-containerd-c1.scope"
)

// Records are the registry's records of the trees' pods: an active one (its container has no
// recorded init, so nothing says it stopped), an idle one in Class, a pending one (no group:
// no RMID) and one whose group disappeared.
func Records() []registry.Record {
	idle := Created.Add(time.Minute)
	return []registry.Record{
		{Group: UIDActive, Path: resctrlfs.Addr{Name: UIDActive}.Path(), PodUID: UIDActive, Namespace: "shop", PodName: "cart",
			SandboxID: "sandbox-a", Containers: map[string]time.Time{"a1": Created}, Names: map[string]string{"a1": "app"},
			Cgroups: map[string]string{"a1": CgroupActive}, PodCgroup: PodCgroupActive, Created: Created},
		{Group: UIDIdle, Path: resctrlfs.Addr{Class: Class, Name: UIDIdle}.Path(), Class: Class, PodUID: UIDIdle,
			Namespace: "shop", PodName: "batch", SandboxID: "sandbox-b", Containers: map[string]time.Time{},
			Created: Created, IdleSince: &idle},
		{Group: UIDPending, Path: resctrlfs.Addr{Name: UIDPending}.Path(), PodUID: UIDPending, Namespace: "web", PodName: "front",
			SandboxID: "sandbox-c", Containers: map[string]time.Time{"c1": Created}, Cgroups: map[string]string{"c1": CgroupPending},
			Created: Created, Pending: "no free RMID (Out of RMIDs)"},
		{Group: UIDMissing, Path: resctrlfs.Addr{Name: UIDMissing}.Path(), PodUID: UIDMissing, Namespace: "web", PodName: "gone",
			SandboxID: "sandbox-d", Containers: map[string]time.Time{"d1": Created}, Created: Created},
	}
}

// Counts are the counts State writes, by name (vocab.OutcomeCount and the like);
// "failure.future" is a reason this version does not know (a newer writer's).
var Counts = map[string]int{
	"hook.created":      2,
	"hook.joined":       1,
	"adapter.pending":   1,
	"reconcile.removed": 3,
	"snapshot.begin":    2,
	"snapshot.end":      1,
	"failure.create":    1,
	"failure.future":    2,
}

// State writes Records and Counts into a fresh state directory of the test and returns it.
func State(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	s, err := registry.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Records() {
		err := s.Update(r.Group, time.Second, func(tx *registry.Tx) error {
			tx.Rec = r
			return tx.Save()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, n := range Counts {
		for range n {
			if err := s.Count(name); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// Config is the configuration of the tree name with State's state dir, no snapshots.
func Config(t testing.TB, name string) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir = Dir(t, name), State(t), ""
	return cfg
}

// Proc is a procfs of the test's for cgroup.Host: the kernel keeps pressure (pressure/cpu),
// and the cgroup2 hierarchy is mounted at testdata/cgroup (self/mountinfo), which holds the
// pressure files of the cgroups State's records name.
func Proc(t testing.TB) cgroup.Host {
	t.Helper()
	proc := t.TempDir()
	files := map[string]string{
		"pressure/cpu": "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"self/mountinfo": fmt.Sprintf("30 23 0:26 / %s rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n",
			filepath.Join(testdata(), "cgroup")),
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Join(proc, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return cgroup.Host{Proc: proc}
}
