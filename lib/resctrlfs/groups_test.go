package resctrlfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/intel/goresctrl/pkg/monitor"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
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
	k, err := kernel.Open(sim.Dir, resctrlfs.CheckSimulator, monitor.PodUIDValidator, monitor.CanonicalizePodUID, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Ensure(resctrlfs.Addr{Name: uid}); err != nil { // adopts: goresctrl logs that at info
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sim.Dir, "mon_groups", uid, "tasks"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := k.Remove(resctrlfs.Addr{Name: uid}); err != nil { // non-empty: goresctrl warns
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
	mine, err := kernel.Open(sim.Dir, resctrlfs.CheckSimulator, monitor.PodUIDValidator, monitor.CanonicalizePodUID, nil)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := kernel.Open(sim.Dir, resctrlfs.CheckSimulator, monitor.PodUIDValidator, monitor.CanonicalizePodUID, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, class := range []string{"", "gold"} {
		g := resctrlfs.Addr{Class: class, Name: uid}
		if err := theirs.Ensure(g); err != nil {
			t.Fatal(err)
		}
		if err := mine.Remove(g); err != nil || mine.Exists(g) {
			t.Errorf("class %q: Remove of a group another process made: %v, still there: %v", class, err, mine.Exists(g))
		}
		if err := mine.Remove(g); err != nil {
			t.Errorf("class %q: Remove of a group already gone: %v", class, err)
		}
		if err := theirs.Remove(g); err != nil {
			t.Errorf("class %q: the maker's Remove after another's: %v", class, err)
		}
	}
}

// On a Sub-NUMA Cluster node (the simulator's SNCWays) a MonReader reads each cache's
// summed files only; with Subdomains every node's own files too, marked with their
// directory (read from its listing and again from the cached layout), each node under its
// cache. Swept over the node counts and one or two caches.
func TestMonReaderSubdomains(t *testing.T) {
	for _, tc := range []struct{ ways, caches int }{{2, 1}, {2, 2}, {3, 1}, {4, 2}} {
		t.Run(fmt.Sprintf("snc=%d,caches=%d", tc.ways, tc.caches), func(t *testing.T) {
			t.Parallel()
			sim := resctrlsim.MountT(t, resctrlsim.Options{L3Domains: tc.caches, SNCWays: tc.ways})
			dir := filepath.Join(sim.Dir, "mon_groups/a")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			plain, _, err := new(resctrlfs.MonReader).Read(dir)
			if err != nil || len(plain) != 3*tc.caches {
				t.Fatalf("without Subdomains: %+v, %v; want the 3 summed files of %d caches", plain, err, tc.caches)
			}
			for _, r := range plain {
				if r.Sub != "" {
					t.Errorf("without Subdomains, read %+v", r)
				}
			}
			r := resctrlfs.MonReader{Subdomains: true}
			for pass := range 2 { // listed, then from the cached layout
				all, missing, err := r.Read(dir)
				if err != nil || len(missing) != 0 || len(all) != 3*tc.caches*(1+tc.ways) {
					t.Fatalf("pass %d: %d readings, %v missing, %v; want %d", pass, len(all), missing, err, 3*tc.caches*(1+tc.ways))
				}
				nodes := map[string]bool{}
				for _, rd := range all {
					if rd.Sub == "" {
						continue
					}
					res, id, err := resctrlfs.SubdomainID(rd.Sub)
					if err != nil || res != "L3" {
						t.Errorf("pass %d: %+v: %q %v", pass, rd, res, err)
					}
					_, cache, _ := resctrlfs.DomainID(rd.Domain)
					c, _ := strconv.Atoi(cache)
					n, _ := strconv.Atoi(id)
					if n/tc.ways != c {
						t.Errorf("pass %d: node %d under cache %d", pass, n, c)
					}
					nodes[id] = true
				}
				if len(nodes) != tc.ways*tc.caches {
					t.Errorf("pass %d: nodes %v, want %d", pass, nodes, tc.ways*tc.caches)
				}
			}
		})
	}
}
