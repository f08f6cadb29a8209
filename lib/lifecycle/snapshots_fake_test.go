package lifecycle

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
)

// Snapshots on the fake: a pod's .begin and .end carry what its group's counters read (the
// fixture trees of test/resctrlfake, as the kernel lays them out), a snapshot that cannot
// read them is still written and the failure counted, and pruning never takes a live life's
// .begin.

// snapshotLines words a snapshot's readings and unavailable counters one a line, sorted, as
// the trees' tests in lib/resctrlfs word them.
func snapshotLines(s snapshot.Snapshot) []string {
	var out []string
	for _, r := range s.Readings {
		out = append(out, fmt.Sprintf("%s/%s = %s %s %s", r.Domain, r.Name, strconv.FormatFloat(r.Value, 'f', -1, 64), r.Kind, r.Unit))
	}
	for _, u := range s.Unavailable {
		out = append(out, u+": no sample")
	}
	slices.Sort(out)
	return out
}

// readSnapshot reads group's kind snapshot of the life the record began.
func readSnapshot(t *testing.T, dir, group string, life time.Time, kind snapshot.Kind) snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.ReadFile(filepath.Join(dir, snapshot.FileName(group, life, kind)))
	if err != nil {
		t.Fatalf("%s of %s: %v", kind, group, err)
	}
	return s
}

func TestFakeSnapshotReadings(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		tree   string
		assign bool // mbm_event mode with no counter left for the pod's group
		want   []string
	}{
		"l3": {tree: "l3", want: []string{
			"mon_L3_00/llc_occupancy = 540672 gauge By",
			"mon_L3_00/mbm_local_bytes = 98765432 counter By",
			"mon_L3_00/mbm_total_bytes = 123456789 counter By",
			"mon_L3_01/llc_occupancy = 1081344 gauge By",
			"mon_L3_01/mbm_local_bytes: no sample", // Unavailable
			"mon_L3_01/mbm_total_bytes = 23456789 counter By",
		}},
		"aet": {tree: "aet", want: []string{
			"mon_L3_00/llc_occupancy = 540672 gauge By",
			"mon_L3_00/mbm_total_bytes = 123456789 counter By",
			"mon_PERF_PKG_00/activity = 54446119.644974 counter nF",
			"mon_PERF_PKG_00/core_energy = 1042.371582 counter J",
		}},
		"l3, mbm_event, no counter free": {tree: "l3", assign: true, want: []string{
			"mon_L3_00/llc_occupancy = 540672 gauge By",
			"mon_L3_00/mbm_local_bytes: no sample", // Unassigned
			"mon_L3_00/mbm_total_bytes: no sample",
			"mon_L3_01/llc_occupancy = 1081344 gauge By",
			"mon_L3_01/mbm_local_bytes: no sample",
			"mon_L3_01/mbm_total_bytes: no sample",
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, bareFake(8), withConfig(func(c *config.Config) { c.SnapshotDir, c.Retention = t.TempDir(), 0 }))
			fake := e.fake
			fake.ForgetTasks()
			fake.UseTree(resctrlfake.Tree(t, c.tree))
			if c.assign {
				fake.SetAssignMode(resctrlfs.AssignModeEvent, 2, 2) // the root group holds them all
			}
			if out, err := e.create("c1", os.Getpid(), crio(podA, sbA)); err != nil || out.Action != vocab.Created {
				t.Fatalf("create: %+v, %v", out, err)
			}
			rec, _, err := e.m.Store().Load(podA)
			if err != nil {
				t.Fatal(err)
			}
			e.now = e.now.Add(time.Minute)
			if out := e.stop("c1", crio(podA, sbA)); out.Action != vocab.Removed {
				t.Fatalf("stop (retention 0): %+v", out)
			}
			for _, kind := range []snapshot.Kind{snapshot.Begin, snapshot.End} {
				s := readSnapshot(t, e.cfg.SnapshotDir, podA, rec.Created, kind)
				if got := snapshotLines(s); !slices.Equal(got, c.want) {
					t.Errorf("%s:\n got %q\nwant %q", kind, got, c.want)
				}
				if s.Kind != kind || s.Path != "mon_groups/"+podA || !s.Life.Equal(rec.Created) || s.Pod == nil || s.Pod.UID != podA {
					t.Errorf("%s: %+v, want pod %s's group, life %s", kind, s, podA, rec.Created)
				}
			}
			counts, _ := e.m.Store().Counts()
			if counts[vocab.SnapshotCount(snapshot.Begin)] != 1 || counts[vocab.SnapshotCount(snapshot.End)] != 1 {
				t.Errorf("snapshots counted: %v, want one .begin and one .end", counts)
			}
		})
	}
}

// A group whose counters cannot be read still gets its .begin (with no readings) and the
// container its place; the failure is recorded and counted as a snapshot's.
func TestFakeSnapshotCountersFail(t *testing.T) {
	t.Parallel()
	e := newEnv(t, bareFake(8), withConfig(func(c *config.Config) { c.SnapshotDir, c.Retention = t.TempDir(), 0 }))
	fake := e.fake
	fake.UseTree(resctrlfake.Tree(t, "l3"))
	fake.FailNext(resctrlfake.OpCounters, 1, syscall.EIO)
	pid := e.proc()
	if out, err := e.create("c1", pid, crio(podA, sbA)); err != nil || out.Action != vocab.Created {
		t.Fatalf("create with the counters failing: %+v, %v; want created", out, err)
	}
	if tasks, _ := fake.Tasks(resctrlfs.Addr{Name: podA}); !tasks[pid] {
		t.Errorf("the container's init is not in its group: %v", tasks)
	}
	rec, _, _ := e.m.Store().Load(podA)
	s := readSnapshot(t, e.cfg.SnapshotDir, podA, rec.Created, snapshot.Begin)
	if len(s.Readings) != 0 || len(s.Unavailable) != 0 || s.Path != "mon_groups/"+podA {
		t.Errorf(".begin of a group whose counters failed: %+v, want no readings", s)
	}
	fails, err := e.m.Store().Failures(time.Time{})
	if err != nil || len(fails) != 1 || fails[0].Reason != string(vocab.FailSnapshot) || fails[0].Subject != "mon_groups/"+podA ||
		fails[0].Pod != podA || !strings.Contains(fails[0].Error, "fake fault in counters") {
		t.Errorf("failures: %+v, %v; want one snapshot failure of the group, saying why", fails, err)
	}
	counts, _ := e.m.Store().Counts()
	if counts[vocab.FailureCount(vocab.FailSnapshot)] != 1 || counts[vocab.SnapshotCount(snapshot.Begin)] != 1 {
		t.Errorf("counts: %v, want failure.snapshot and snapshot.begin once each", counts)
	}
	// The next read works again: the .end carries the tree's readings.
	crash(t, pid)
	if out := e.stop("c1", crio(podA, sbA)); out.Action != vocab.Removed {
		t.Fatalf("stop (retention 0): %+v", out)
	}
	if end := readSnapshot(t, e.cfg.SnapshotDir, podA, rec.Created, snapshot.End); len(end.Readings) != 5 || len(end.Unavailable) != 1 {
		t.Errorf(".end after the fault: %d readings, %v unavailable; want the l3 tree's 5 and 1", len(end.Readings), end.Unavailable)
	}
}

// Pruning takes finished lives past snapshotMaxAge and keeps the .begin of a life still
// going on, however old: its .end, when it comes, has its pair.
func TestFakeSnapshotPruneKeepsLiveBegin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, bareFake(8), withConfig(func(c *config.Config) {
		c.SnapshotDir, c.Retention, c.SnapshotMaxAge = t.TempDir(), 0, config.Duration(time.Hour)
	}))
	fake := e.fake
	fake.ForgetTasks()
	fake.UseTree(resctrlfake.Tree(t, "l3"))
	for _, c := range []struct{ id, pod string }{{"a1", podA}, {"b1", podB}} {
		if _, err := e.create(c.id, os.Getpid(), fakeCrio(c.pod)); err != nil {
			t.Fatal(err)
		}
	}
	recA, _, _ := e.m.Store().Load(podA)
	if out := e.stop("b1", fakeCrio(podB)); out.Action != vocab.Removed {
		t.Fatalf("stop b1 (retention 0): %+v", out)
	}
	if names := lifeSnapshots(t, e.cfg.SnapshotDir, podB); len(names) != 2 {
		t.Fatalf("pod B's life: %+v, want .begin and .end", names)
	}
	e.now = e.now.Add(2 * time.Hour)
	if _, err := e.m.Sweep(); err != nil {
		t.Fatal(err)
	}
	if names := lifeSnapshots(t, e.cfg.SnapshotDir, podB); len(names) != 0 {
		t.Errorf("pod B's finished life outlived snapshotMaxAge: %+v", names)
	}
	names := lifeSnapshots(t, e.cfg.SnapshotDir, podA)
	if len(names) != 1 || names[0].Kind != snapshot.Begin || !names[0].Life.Equal(recA.Created) {
		t.Fatalf("pod A, still running, two hours on: %+v, want its .begin kept", names)
	}
	if out := e.stop("a1", fakeCrio(podA)); out.Action != vocab.Removed {
		t.Fatalf("stop a1: %+v", out)
	}
	if names := lifeSnapshots(t, e.cfg.SnapshotDir, podA); len(names) != 2 {
		t.Errorf("pod A's life ended: %+v, want its .begin and .end", names)
	}
}
