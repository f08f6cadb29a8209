package resctrlfs_test

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/test/resctrltree"
)

var (
	active  = resctrlfs.Addr{Name: resctrltree.UIDActive}
	idle    = resctrlfs.Addr{Class: resctrltree.Class, Name: resctrltree.UIDIdle}
	foreign = resctrlfs.Addr{Name: resctrltree.Foreign}
	gone    = resctrlfs.Addr{Name: resctrltree.UIDMissing}
)

func openView(t *testing.T, tree string) *resctrlfs.View {
	t.Helper()
	v, err := resctrlfs.OpenView(resctrltree.Dir(t, tree), resctrltree.Mount)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The View reads every fixture tree the same way: the groups present (a class, ours and a
// foreign one, never info or mon_data), their tasks, num_rmids and the kernel's last word.
func TestViewTrees(t *testing.T) {
	t.Parallel()
	rmids := map[string]int{resctrltree.L3: 256, resctrltree.AET: 64, resctrltree.MBMEvent: 256, resctrltree.SNC: 128, resctrltree.Sim: 64}
	for _, tree := range resctrltree.Names {
		t.Run(tree, func(t *testing.T) {
			t.Parallel()
			v := openView(t, tree)
			p, err := v.Groups()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Classes, []string{resctrltree.Class}) {
				t.Errorf("classes %q, want [%s]", p.Classes, resctrltree.Class)
			}
			want := []resctrlfs.Addr{active, foreign, idle}
			if !slices.Equal(p.Groups, want) {
				t.Errorf("groups %v, want %v", p.Groups, want)
			}
			if n, err := v.NumRMIDs(); err != nil || n != rmids[tree] {
				t.Errorf("num_rmids %d, %v; want %d", n, err, rmids[tree])
			}
			for a, exists := range map[resctrlfs.Addr]bool{active: true, idle: true, foreign: true, gone: false} {
				if v.Exists(a) != exists {
					t.Errorf("%s exists: %v", a, !exists)
				}
			}
			tids, err := v.Tasks(active)
			if err != nil || !tids[1] || !tids[999999999] || len(tids) != 2 {
				t.Errorf("tasks of %s: %v, %v", active, tids, err)
			}
			if _, err := v.Tasks(gone); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("tasks of a group that is not there: %v", err)
			}
			if s := v.LastCmdStatus(); s != "ok" {
				t.Errorf("last_cmd_status %q", s)
			}
		})
	}
}

// Counters of the kernel's documented layouts, through the View: a missing sample said as
// such, AET's decimals, an SNC node's files only when asked for.
func TestViewCounters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tree string
		a    resctrlfs.Addr
		subs bool
		want []string // domain/[sub/]name=value or =reason, sorted
	}{
		{resctrltree.L3, active, false, []string{
			"mon_L3_00/llc_occupancy=540672", "mon_L3_00/mbm_local_bytes=9.8765432e+07", "mon_L3_00/mbm_total_bytes=1.23456789e+08",
			"mon_L3_01/llc_occupancy=1.081344e+06", "mon_L3_01/mbm_local_bytes=Unavailable", "mon_L3_01/mbm_total_bytes=2.3456789e+07"}},
		{resctrltree.L3, idle, false, []string{
			"mon_L3_00/llc_occupancy=65536", "mon_L3_00/mbm_local_bytes=4096", "mon_L3_00/mbm_total_bytes=4096",
			"mon_L3_01/llc_occupancy=Error", "mon_L3_01/mbm_local_bytes=0", "mon_L3_01/mbm_total_bytes=8192"}},
		{resctrltree.AET, active, false, []string{
			"mon_L3_00/llc_occupancy=540672", "mon_L3_00/mbm_total_bytes=1.23456789e+08",
			"mon_PERF_PKG_00/activity=5.4446119644974e+07", "mon_PERF_PKG_00/core_energy=1042.371582"}},
		{resctrltree.MBMEvent, idle, false, []string{
			"mon_L3_00/llc_occupancy=8192", "mon_L3_00/mbm_local_bytes=Unassigned", "mon_L3_00/mbm_total_bytes=Unassigned",
			"mon_L3_01/llc_occupancy=16384", "mon_L3_01/mbm_local_bytes=Unassigned", "mon_L3_01/mbm_total_bytes=2048"}},
		{resctrltree.SNC, idle, false, []string{
			"mon_L3_00/llc_occupancy=4003", "mon_L3_00/mbm_local_bytes=200003", "mon_L3_00/mbm_total_bytes=400003",
			"mon_L3_01/llc_occupancy=4023", "mon_L3_01/mbm_local_bytes=200023", "mon_L3_01/mbm_total_bytes=400023"}},
		{resctrltree.SNC, idle, true, []string{
			"mon_L3_00/llc_occupancy=4003", "mon_L3_00/mbm_local_bytes=200003", "mon_L3_00/mbm_total_bytes=400003",
			"mon_L3_00/mon_sub_L3_00/llc_occupancy=2001", "mon_L3_00/mon_sub_L3_00/mbm_local_bytes=100001", "mon_L3_00/mon_sub_L3_00/mbm_total_bytes=200001",
			"mon_L3_00/mon_sub_L3_01/llc_occupancy=2002", "mon_L3_00/mon_sub_L3_01/mbm_local_bytes=100002", "mon_L3_00/mon_sub_L3_01/mbm_total_bytes=200002",
			"mon_L3_01/llc_occupancy=4023", "mon_L3_01/mbm_local_bytes=200023", "mon_L3_01/mbm_total_bytes=400023",
			"mon_L3_01/mon_sub_L3_02/llc_occupancy=2011", "mon_L3_01/mon_sub_L3_02/mbm_local_bytes=100011", "mon_L3_01/mon_sub_L3_02/mbm_total_bytes=200011",
			"mon_L3_01/mon_sub_L3_03/llc_occupancy=2012", "mon_L3_01/mon_sub_L3_03/mbm_local_bytes=100012", "mon_L3_01/mon_sub_L3_03/mbm_total_bytes=200012"}},
	} {
		v := openView(t, tc.tree)
		readings, missing, err := v.Counters(tc.a, tc.subs)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.tree, tc.a, err)
		}
		var have []string
		for _, r := range readings {
			have = append(have, strings.Join(slices.DeleteFunc([]string{r.Domain, r.Sub, r.Name}, func(s string) bool { return s == "" }), "/")+"="+strconv.FormatFloat(r.Value, 'g', -1, 64))
		}
		for _, m := range missing {
			have = append(have, strings.Join(slices.DeleteFunc([]string{m.Domain, m.Sub, m.Name}, func(s string) bool { return s == "" }), "/")+"="+m.Reason)
		}
		slices.Sort(have)
		if !slices.Equal(have, tc.want) {
			t.Errorf("%s %s (subdomains %v):\n have %q\n want %q", tc.tree, tc.a, tc.subs, have, tc.want)
		}
	}
	if _, _, err := openView(t, resctrltree.L3).Counters(gone, false); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("counters of a group that is not there: %v", err)
	}
}

// Counter assignment through the View: the mode and free counters of mbm_event mode, each
// group's assignments; none on a kernel without the interface.
func TestViewAssignment(t *testing.T) {
	t.Parallel()
	v := openView(t, resctrltree.MBMEvent)
	a, err := v.Assignment()
	if err != nil || !a.Counting() || a.Counters["0"] != 32 || a.Counters["1"] != 32 || a.Available["0"] != 30 || a.Available["1"] != 31 {
		t.Errorf("assignment %+v, %v", a, err)
	}
	for addr, want := range map[resctrlfs.Addr]map[string][]string{
		active: {"0": {resctrlfs.MBMTotal}},
		idle:   {"1": {resctrlfs.MBMTotal}},
	} {
		g, err := v.GroupAssignment(addr)
		if err != nil || len(g.Assigned) != len(want) || !slices.Equal(g.Assigned["0"], want["0"]) || !slices.Equal(g.Assigned["1"], want["1"]) ||
			!slices.Equal(g.Events, []string{resctrlfs.MBMTotal, resctrlfs.MBMLocal}) {
			t.Errorf("assignments of %s: %+v, %v; want %v", addr, g, err, want)
		}
	}
	if a, err := openView(t, resctrltree.L3).Assignment(); err != nil || a.Mode != "" {
		t.Errorf("assignment on a kernel without it: %+v, %v", a, err)
	}
}

// The mount check is the opener's: a refusal is OpenView's error, and without one the View
// takes the kernel's resctrl only (Check), which a fixture tree is not.
func TestOpenViewMount(t *testing.T) {
	t.Parallel()
	dir := resctrltree.Dir(t, resctrltree.L3)
	refused := errors.New("refused")
	if _, err := resctrlfs.OpenView(dir, func(string) error { return refused }); !errors.Is(err, refused) {
		t.Errorf("a refused mount opened: %v", err)
	}
	if _, err := resctrlfs.OpenView(dir, nil); !errors.Is(err, resctrlfs.ErrNotResctrl) {
		t.Errorf("nil mount: a plain directory opened: %v", err)
	}
	if _, err := resctrlfs.OpenView(t.TempDir(), resctrltree.Mount); err == nil {
		t.Errorf("the fixtures' mount check took a directory that is not one of them")
	}
}
