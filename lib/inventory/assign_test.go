package inventory_test

import (
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// Status says how the kernel counts bandwidth: nothing on a kernel before 6.18, the mode in
// default mode, and the free counters of each domain in mbm_event mode.
func TestStatusAssignment(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		assign resctrlsim.MBMAssign
		want   string // in the JSON; "" for no mbmAssignment at all
	}{
		{resctrlsim.MBMAssignAbsent, ""},
		{resctrlsim.MBMAssignDefaultOnly, `"mbmAssignment":{"mode":"default"}`},
		{resctrlsim.MBMAssignEvent, `"mbmAssignment":{"mode":"mbm_event","counters":{"0":8,"1":8},"available":{"0":6,"1":6}}`},
	} {
		t.Run(string(tc.assign), func(t *testing.T) {
			t.Parallel()
			o := resctrlsim.Options{MBMAssign: tc.assign, L3Domains: 2}
			if tc.assign == resctrlsim.MBMAssignEvent {
				o.MBMCounters = 8
			}
			sim := resctrlsim.MountT(t, o)
			cfg := config.Default()
			cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir = sim.Dir, filepath.Join(t.TempDir(), "state"), ""
			cfg.ResctrlSimulator = true
			if _, err := lifecycle.New(cfg, slog.New(slog.DiscardHandler), kernel.Open); err != nil {
				t.Fatal(err)
			}
			inv, err := inventory.Open(cfg, resctrlfs.MountFor(cfg.ResctrlSimulator))
			if err != nil {
				t.Fatal(err)
			}
			st, err := inv.Status()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(st)
			switch {
			case tc.want == "" && strings.Contains(string(b), "mbmAssignment"):
				t.Errorf("status on a kernel without assignment: %s", b)
			case tc.want != "" && !strings.Contains(string(b), tc.want):
				t.Errorf("status %s, want it to contain %s", b, tc.want)
			}
		})
	}
}
