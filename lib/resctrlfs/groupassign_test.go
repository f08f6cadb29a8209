package resctrlfs_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

func TestParseGroupAssignment(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]map[string][]string{
		"mbm_total_bytes:0=e;1=_\nmbm_local_bytes:0=e;1=e\n": {"0": {"mbm_total_bytes", "mbm_local_bytes"}, "1": {"mbm_local_bytes"}},
		"mbm_total_bytes:0=_\n":                              {},
		"":                                                   {},
		"mbm_total_bytes:00=e\n":                             {"0": {"mbm_total_bytes"}},
	} {
		got, err := resctrlfs.ParseGroupAssignment([]byte(in))
		if err != nil || !maps.EqualFunc(got.Assigned, want, slices.Equal) {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"mbm_total_bytes\n", "mbm_total_bytes:0=x\n", "mbm_total_bytes:a=e\n", ":0=e\n",
		"mbm_total_bytes:0=e;\n", "mbm total:0=e\n", "mbm_total_bytes:0=e\nmbm_total_bytes:1=e\n"} {
		if got, err := resctrlfs.ParseGroupAssignment([]byte(in)); err == nil {
			t.Errorf("%q: accepted as %v", in, got)
		}
	}
}

func FuzzParseGroupAssignment(f *testing.F) {
	f.Add("mbm_total_bytes:0=e;1=_\nmbm_local_bytes:0=e;1=e\n")
	f.Add("mbm_total_bytes:*=e\n")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := resctrlfs.ParseGroupAssignment([]byte(s))
		if err != nil {
			return
		}
		for d, evs := range a.Assigned {
			if d == "" || len(evs) == 0 {
				t.Errorf("%q: domain %q events %q", s, d, evs)
			}
			for _, e := range evs {
				if !slices.Contains(a.Events, e) {
					t.Errorf("%q: %s assigned and not listed in %q", s, e, a.Events)
				}
			}
		}
	})
}

// Writes on the simulator in mbm_event mode: assigned and unassigned as written; a write the
// kernel refuses (no counter left, the mode switched away) says why in the kernel's words.
func TestWriteAssignment(t *testing.T) {
	t.Parallel()
	// Two counters a domain: the root group holds both, so mkdir gives the group none.
	sim := resctrlsim.MountT(t, resctrlsim.Options{MBMAssign: resctrlsim.MBMAssignEvent, MBMCounters: 2, L3Domains: 2})
	for _, g := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(sim.Dir, "mon_groups", g), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	read := func(path string) map[string][]string {
		t.Helper()
		a, err := resctrlfs.ReadGroupAssignment(sim.Dir, path)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{resctrlfs.MBMTotal, resctrlfs.MBMLocal}; !slices.Equal(a.Events, want) {
			t.Errorf("events %q, want %q", a.Events, want)
		}
		return a.Assigned
	}
	if a := read("mon_groups/a"); len(a) != 0 {
		t.Fatalf("a holds %v before any write", a)
	}
	err := resctrlfs.WriteAssignment(sim.Dir, "mon_groups/a", "mbm_total_bytes:0=e")
	if err == nil || !strings.Contains(err.Error(), "Failed to allocate counter for mbm_total_bytes in domain 0") {
		t.Errorf("no counter free: %v, want the kernel's reason", err)
	}
	for _, line := range []string{"mbm_total_bytes:0=_", "mbm_local_bytes:0=_"} {
		if err := resctrlfs.WriteAssignment(sim.Dir, "", line); err != nil {
			t.Fatal(err)
		}
	}
	if err := resctrlfs.WriteAssignment(sim.Dir, "mon_groups/a", "mbm_total_bytes:0=e"); err != nil {
		t.Fatal(err)
	}
	if a := read("mon_groups/a"); !maps.EqualFunc(a, map[string][]string{"0": {"mbm_total_bytes"}}, slices.Equal) {
		t.Errorf("a holds %v, want mbm_total_bytes in domain 0", a)
	}
	if err := os.WriteFile(filepath.Join(sim.Dir, "info/L3_MON/mbm_assign_mode"), []byte("default\n"), 0); err != nil {
		t.Fatal(err)
	}
	err = resctrlfs.WriteAssignment(sim.Dir, "mon_groups/b", "mbm_total_bytes:0=e")
	if err == nil || !strings.Contains(err.Error(), "not enabled") {
		t.Errorf("mode switched to default: %v, want the kernel's reason", err)
	}
}
