package resctrlfs_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/intel/goresctrl/pkg/monitor"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

const uid = "0f8b2c1e-1111-2222-3333-444455556666"

// goresctrl's messages go to the logger the library was opened with, warnings and above
// only: never raw on stderr (where the CLI printed them), never its info chatter.
func TestGoresctrlLogsThroughOurLogger(t *testing.T) {
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	if err := os.Mkdir(filepath.Join(sim.Dir, "mon_groups", uid), 0o755); err != nil {
		t.Fatal(err)
	}
	k, err := resctrlfs.Open(sim.Dir, resctrlfs.CheckSimulator, monitor.PodUIDValidator, monitor.CanonicalizePodUID, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Ensure(uid, ""); err != nil { // adopts: goresctrl logs that at info
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sim.Dir, "mon_groups", uid, "tasks"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := k.Remove(uid, ""); err != nil { // non-empty: goresctrl warns
		t.Fatal(err)
	}
	got := buf.String()
	if strings.Contains(got, "adopting") || !strings.Contains(got, "non-empty") || !strings.Contains(got, "lib=goresctrl") {
		t.Errorf("goresctrl's log: %q", got)
	}
}

// Our counter table gives each counter the kind and unit goresctrl gives it.
func TestMetaMatchesGoresctrl(t *testing.T) {
	sim := resctrlsim.MountT(t, resctrlsim.Options{L3Domains: 2, PerfPkgDomains: 1})
	mon, err := monitor.New(monitor.Options{ResctrlRoot: sim.Dir, KeyValidator: monitor.PodUIDValidator})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mon.EnsureGroup(uid, ""); err != nil {
		t.Fatal(err)
	}
	theirs, err := mon.ReadCounters(uid)
	if err != nil || len(theirs) == 0 {
		t.Fatalf("goresctrl read %v, %v", theirs, err)
	}
	ours, missing, err := new(resctrlfs.MonReader).Read(filepath.Join(sim.Dir, "mon_groups", uid))
	if err != nil || len(ours) != len(theirs) || len(missing) != 0 {
		t.Fatalf("read %d counters (%v missing, %v), goresctrl %d", len(ours), missing, err, len(theirs))
	}
	for _, r := range theirs {
		cum, unit := resctrlfs.CounterMeta(r.Name)
		if cum != (r.Kind == monitor.Cumulative) || unit != r.Unit {
			t.Errorf("%s: ours cumulative=%v unit=%q, goresctrl kind=%v unit=%q", r.Name, cum, unit, r.Kind, r.Unit)
		}
	}
	sim.SetCounterState("mbm_total_bytes", "Unavailable", "*")
	_, missing, _ = new(resctrlfs.MonReader).Read(filepath.Join(sim.Dir, "mon_groups", uid))
	if len(missing) != 2 || missing[0].Reason != "Unavailable" {
		t.Errorf("an Unavailable counter on two domains: %+v", missing)
	}
}

// MonReader, which lists mon_data once for all groups, reads what a fresh one (which lists
// it) reads in every group of the simulator (two L3 domains and an AET one, at the root and in a class),
// a counter's Unavailable included, and a group gone is os.ErrNotExist.
func TestMonReaderMatchesListing(t *testing.T) {
	sim := resctrlsim.MountT(t, resctrlsim.Options{L3Domains: 2, PerfPkgDomains: 1})
	groups := []string{"mon_groups/a", "mon_groups/b", "gold/mon_groups/c"}
	for _, g := range append([]string{"gold"}, groups...) {
		if err := os.Mkdir(filepath.Join(sim.Dir, g), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sim.SetCounterState("mbm_local_bytes", "Unavailable", "*")
	var r resctrlfs.MonReader
	for range 2 {
		for _, g := range groups {
			dir := filepath.Join(sim.Dir, g)
			wantR, wantM, err := new(resctrlfs.MonReader).Read(dir)
			if err != nil || len(wantR) == 0 || len(wantM) == 0 {
				t.Fatalf("%s: listed %v, %v missing, %v", g, wantR, wantM, err)
			}
			gotR, gotM, err := r.Read(dir)
			if err != nil || !reflect.DeepEqual(gotR, wantR) || !reflect.DeepEqual(gotM, wantM) {
				t.Errorf("%s: MonReader read %+v, %+v missing, %v; listed %+v, %+v", g, gotR, gotM, err, wantR, wantM)
			}
		}
	}
	if err := os.Remove(filepath.Join(sim.Dir, groups[1])); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Read(filepath.Join(sim.Dir, groups[1])); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a group gone: %v, want os.ErrNotExist", err)
	}
}

// A group made by another process after this one opened resctrl (a hook made it; a reconcile
// or a poststop ends it) is removed by its name and class, without being made known to
// goresctrl first; one already gone is no error.
func TestRemoveAnotherProcesssGroup(t *testing.T) {
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	if err := os.Mkdir(filepath.Join(sim.Dir, "gold"), 0o755); err != nil {
		t.Fatal(err)
	}
	mine, err := resctrlfs.Open(sim.Dir, resctrlfs.CheckSimulator, monitor.PodUIDValidator, monitor.CanonicalizePodUID, nil)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := resctrlfs.Open(sim.Dir, resctrlfs.CheckSimulator, monitor.PodUIDValidator, monitor.CanonicalizePodUID, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, class := range []string{"", "gold"} {
		if err := theirs.Ensure(uid, class); err != nil {
			t.Fatal(err)
		}
		path := resctrlfs.GroupPath(class, uid)
		if err := mine.Remove(uid, class); err != nil || mine.Exists(path) {
			t.Errorf("class %q: Remove of a group another process made: %v, still there: %v", class, err, mine.Exists(path))
		}
		if err := mine.Remove(uid, class); err != nil {
			t.Errorf("class %q: Remove of a group already gone: %v", class, err)
		}
		if err := theirs.Remove(uid, class); err != nil {
			t.Errorf("class %q: the maker's Remove after another's: %v", class, err)
		}
	}
}
