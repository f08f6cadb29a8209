package lifecycle

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// NRI's second departure of a container (RemoveContainer after StopContainer) changes
// nothing in a pod that has other containers, or whose idle clock runs: it is answered from
// the record as the locked path would answer it, and the record is not written again.
// Where it does change something it still goes through the lock: the last container of a
// pod under retention 0 whose removal failed is retried, and a container the record holds
// without a binding (a lost binding file) is taken out.
func TestSecondDeparture(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		recordFile := func(e *env) os.FileInfo {
			e.t.Helper()
			fi, err := os.Stat(filepath.Join(e.cfg.StateDir, "groups", podA+".json"))
			if err != nil {
				e.t.Fatal(err)
			}
			return fi
		}
		t.Run("a pod with other containers", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			for _, id := range []string{"c1", "c2"} {
				if _, err := e.create(id, e.proc(), crio(podA, sbA)); err != nil {
					t.Fatal(err)
				}
			}
			if o := e.stop("c1", crio(podA, sbA)); o.Action != vocab.Left {
				t.Fatalf("first departure: %+v", o)
			}
			before := recordFile(e)
			o := e.stop("c1", crio(podA, sbA))
			if o.Action != vocab.Left || o.Group != "mon_groups/"+podA || o.Pod != podA {
				t.Errorf("second departure: %+v, want left from mon_groups/%s", o, podA)
			}
			if !os.SameFile(before, recordFile(e)) {
				t.Errorf("the second departure wrote the record again")
			}
		})
		t.Run("the last container, retention running", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, withConfig(func(c *config.Config) { c.Retention = config.Duration(time.Minute) }))
			p := e.placed("c1", crio(podA, sbA))
			crash(t, p)
			if o := e.stop("c1", crio(podA, sbA)); o.Action != vocab.Idle {
				t.Fatalf("first departure: %+v", o)
			}
			before := recordFile(e)
			if o := e.stop("c1", crio(podA, sbA)); o.Action != vocab.Idle || o.Group != "mon_groups/"+podA {
				t.Errorf("second departure: %+v, want idle", o)
			}
			if !os.SameFile(before, recordFile(e)) {
				t.Errorf("the second departure wrote the record again")
			}
		})
		t.Run("retention 0, a removal to retry", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, withConfig(func(c *config.Config) { c.Retention = 0 }))
			p := e.placed("c1", crio(podA, sbA))
			// The init still runs at the first departure: the group keeps it.
			if o := e.stop("c1", crio(podA, sbA)); o.Action != vocab.Kept {
				t.Fatalf("first departure with the init running: %+v", o)
			}
			crash(t, p)
			if o := e.stop("c1", crio(podA, sbA)); o.Action != vocab.Removed || e.exists("mon_groups/"+podA) {
				t.Errorf("second departure: %+v, want the group removed", o)
			}
		})
		t.Run("a container recorded without its binding", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			for _, id := range []string{"c1", "c2"} {
				if _, err := e.create(id, e.proc(), crio(podA, sbA)); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.m.Store().UnbindContainer("c1"); err != nil {
				t.Fatal(err)
			}
			if o := e.stop("c1", crio(podA, sbA)); o.Action != vocab.Left {
				t.Errorf("departure: %+v", o)
			}
			rec, _, _ := e.m.Store().Load(podA)
			if _, in := rec.Containers["c1"]; in || rec.Inits["c1"].Pid != 0 || rec.Cgroups["c1"] != "" {
				t.Errorf("the record still holds c1: %+v", rec)
			}
		})
	})
}
