package resctrlfs_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
)

// The fixture trees (test/resctrlfake/testdata, groups' directories as the kernel lays them
// out) read by the project's readers: what the fake gives every decision test is what these
// parse from the kernel's files, so they are held here to the files' exact values, kinds,
// units and reasons.

// counterLines words readings and missing counters one a line, sorted: "<domain>/<name> =
// <value> <counter|gauge> <unit>" or "<domain>/<name>: <reason>".
func counterLines(readings []resctrlfs.Reading, missing []resctrlfs.Missing) []string {
	var out []string
	for _, r := range readings {
		kind := "gauge"
		if r.Cumulative {
			kind = "counter"
		}
		out = append(out, fmt.Sprintf("%s/%s = %s %s %s", r.Domain, r.Name, strconv.FormatFloat(r.Value, 'f', -1, 64), kind, r.Unit))
	}
	for _, m := range missing {
		out = append(out, fmt.Sprintf("%s/%s: %s", m.Domain, m.Name, m.Reason))
	}
	slices.Sort(out)
	return out
}

func TestTreeCounters(t *testing.T) {
	t.Parallel()
	for tree, want := range map[string][]string{
		// Intel RDT on two L3 domains; one counter the hardware could not read.
		"l3": {
			"mon_L3_00/llc_occupancy = 540672 gauge By",
			"mon_L3_00/mbm_local_bytes = 98765432 counter By",
			"mon_L3_00/mbm_total_bytes = 123456789 counter By",
			"mon_L3_01/llc_occupancy = 1081344 gauge By",
			"mon_L3_01/mbm_local_bytes: Unavailable",
			"mon_L3_01/mbm_total_bytes = 23456789 counter By",
		},
		// Intel AET: energy and activity with the decimals the kernel prints.
		"aet": {
			"mon_L3_00/llc_occupancy = 540672 gauge By",
			"mon_L3_00/mbm_total_bytes = 123456789 counter By",
			"mon_PERF_PKG_00/activity = 54446119.644974 counter nF",
			"mon_PERF_PKG_00/core_energy = 1042.371582 counter J",
		},
		// mbm_event mode: bandwidth counts only where a counter is assigned.
		"mbm-event": {
			"mon_L3_00/llc_occupancy = 540672 gauge By",
			"mon_L3_00/mbm_local_bytes: Unassigned",
			"mon_L3_00/mbm_total_bytes = 123456789 counter By",
			"mon_L3_01/llc_occupancy = 0 gauge By",
			"mon_L3_01/mbm_local_bytes: Unassigned",
			"mon_L3_01/mbm_total_bytes: Unassigned",
		},
	} {
		t.Run(tree, func(t *testing.T) {
			t.Parallel()
			dir := resctrlfake.Tree(t, tree)
			var r resctrlfs.MonReader
			for _, read := range []string{"listing mon_data", "from the listing it kept"} {
				readings, missing, err := r.Read(dir)
				if err != nil {
					t.Fatalf("%s: %v", read, err)
				}
				if got := counterLines(readings, missing); !slices.Equal(got, want) {
					t.Errorf("%s:\n got %q\nwant %q", read, got, want)
				}
			}
		})
	}
}

// The fake reads its groups' counters from a tree through the same reader, and in mbm_event
// mode makes a bandwidth counter its group holds no counter for read Unassigned.
func TestTreeThroughFake(t *testing.T) {
	t.Parallel()
	f := resctrlfake.New(4)
	f.UseTree(resctrlfake.Tree(t, "l3"))
	f.SetAssignMode(resctrlfs.AssignModeEvent, 2, 4) // the root takes 2 of each domain's 4
	for _, name := range []string{"a", "b"} {
		if err := f.Ensure(resctrlfs.Addr{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string][]string{
		"mon_groups/a": { // every counter taken at mkdir
			"mon_L3_00/llc_occupancy = 540672 gauge By",
			"mon_L3_00/mbm_local_bytes = 98765432 counter By",
			"mon_L3_00/mbm_total_bytes = 123456789 counter By",
			"mon_L3_01/llc_occupancy = 1081344 gauge By",
			"mon_L3_01/mbm_local_bytes: Unavailable",
			"mon_L3_01/mbm_total_bytes = 23456789 counter By",
		},
		"mon_groups/b": { // none left
			"mon_L3_00/llc_occupancy = 540672 gauge By",
			"mon_L3_00/mbm_local_bytes: Unassigned",
			"mon_L3_00/mbm_total_bytes: Unassigned",
			"mon_L3_01/llc_occupancy = 1081344 gauge By",
			"mon_L3_01/mbm_local_bytes: Unassigned",
			"mon_L3_01/mbm_total_bytes: Unassigned",
		},
	} {
		readings, missing, err := f.Counters(resctrlfake.At(path))
		if err != nil {
			t.Fatal(err)
		}
		if got := counterLines(readings, missing); !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", path, got, want)
		}
	}
}

// The mbm-event tree's info/L3_MON and mbm_L3_assignments, as ReadAssignment and
// ReadGroupAssignment read them from the kernel's files.
func TestTreeAssignment(t *testing.T) {
	t.Parallel()
	dir := resctrlfake.Tree(t, "mbm-event")
	a, err := resctrlfs.ReadAssignment(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.Mode != resctrlfs.AssignModeEvent || !a.Counting() ||
		!maps.Equal(a.Counters, map[string]int{"0": 32, "1": 32}) || !maps.Equal(a.Available, map[string]int{"0": 30, "1": 31}) {
		t.Errorf("ReadAssignment: %+v, want mbm_event, 32 counters in domains 0 and 1, 30 and 31 free", a)
	}
	ga, err := resctrlfs.ReadGroupAssignment(dir, ".")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ga.Events, []string{resctrlfs.MBMTotal, resctrlfs.MBMLocal}) ||
		!maps.EqualFunc(ga.Assigned, map[string][]string{"0": {resctrlfs.MBMTotal}}, slices.Equal) {
		t.Errorf("ReadGroupAssignment: %+v, want events total and local, total assigned in domain 0 only", ga)
	}
	// The trees without counter assignment are a kernel before 6.18: no mode, no error.
	for _, tree := range []string{"l3", "aet"} {
		if a, err := resctrlfs.ReadAssignment(resctrlfake.Tree(t, tree)); err != nil || a.Mode != "" || a.Counting() {
			t.Errorf("ReadAssignment of %s: %+v, %v; want no mode", tree, a, err)
		}
	}
}
