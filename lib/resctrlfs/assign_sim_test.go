package resctrlfs_test

import (
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// ReadAssignment on each kind of kernel the simulator can be: before 6.18, 6.18 without
// assignable counters, ABMC in default mode, ABMC in mbm_event mode with groups holding
// counters, and Arm MPAM's fixed mbm_event mode.
func TestReadAssignment(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		assign          resctrlsim.MBMAssign
		fixed           bool // Arm MPAM: mbm_assign_mode lists only "[mbm_event]"
		mode            string
		counters, avail map[string]int
	}{
		{assign: resctrlsim.MBMAssignAbsent},
		{assign: resctrlsim.MBMAssignDefaultOnly, mode: "default"},
		{assign: resctrlsim.MBMAssignDefault, mode: "default"},
		// The root holds two counters a domain, the group two.
		{assign: resctrlsim.MBMAssignEvent, mode: "mbm_event",
			counters: map[string]int{"0": 6, "1": 6}, avail: map[string]int{"0": 2, "1": 2}},
		{assign: resctrlsim.MBMAssignEvent, fixed: true, mode: "mbm_event",
			counters: map[string]int{"0": 6, "1": 6}, avail: map[string]int{"0": 2, "1": 2}},
	} {
		name := string(tc.assign)
		if tc.fixed {
			name += "-mpam-fixed"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := resctrlsim.Options{MBMAssign: tc.assign, MPAMFixed: tc.fixed, L3Domains: 2}
			if tc.assign == resctrlsim.MBMAssignEvent || tc.assign == resctrlsim.MBMAssignDefault {
				o.MBMCounters = 6
			}
			sim := resctrlsim.MountT(t, o)
			if err := os.Mkdir(filepath.Join(sim.Dir, "mon_groups/g"), 0o755); err != nil {
				t.Fatal(err)
			}
			a, err := resctrlfs.ReadAssignment(sim.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if a.Mode != tc.mode || a.Counting() != (tc.mode == resctrlfs.AssignModeEvent) ||
				!maps.Equal(a.Counters, tc.counters) || !maps.Equal(a.Available, tc.avail) {
				t.Errorf("%+v, want mode %q counters %v available %v", a, tc.mode, tc.counters, tc.avail)
			}
		})
	}
}
