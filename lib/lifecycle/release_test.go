package lifecycle

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// An uninstall releases every owned group, running tasks and all: the tasks go on in the
// root group, each group's .end is written, the registry is empty after, and a group that
// is not ours stays.
func TestReleaseAll(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t)
		a := e.placed("c1", crio(podA, sbA))
		b := e.placed("c2", crio(podB, sbB))
		e.mkdir("mon_groups/foreign")
		// The uninstall is another process: a manager that made none of the groups.
		m := e.otherManager()
		steps, err := m.ReleaseAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) != 2 || steps[0].Action != vocab.Removed || steps[1].Action != vocab.Removed {
			t.Fatalf("steps %+v, want two groups removed", steps)
		}
		for _, g := range []string{"mon_groups/" + podA, "mon_groups/" + podB} {
			if e.exists(g) {
				t.Errorf("%s still exists", g)
			}
		}
		if !e.exists("mon_groups/foreign") {
			t.Error("the foreign group was removed")
		}
		root := e.tasks("")
		for _, pid := range []int{a, b} {
			if !slices.Contains(root, pid) {
				t.Errorf("task %d is not in the root group after the release", pid)
			}
		}
		recs, err := e.m.Store().List()
		if err != nil || len(recs) != 0 {
			t.Errorf("records after the release: %v, %v", recs, err)
		}
		ends, _ := filepath.Glob(filepath.Join(e.cfg.SnapshotDir, "*.end"))
		if len(ends) != 2 {
			t.Errorf("end snapshots %v, want one per group", ends)
		}
		// Idempotent: a second release finds nothing to do.
		if steps, err := m.ReleaseAll(); err != nil || len(steps) != 0 {
			t.Errorf("second release: %+v, %v", steps, err)
		}
	})
}
