package resctrlsim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// With Intel AET (Linux 7.0), "The upper bound for how many "CTRL_MON" + "MON" can be
// created is the smaller of the L3_MON and PERF_PKG_MON "num_rmids" values"
// (Documentation/filesystems/resctrl.rst). Swept over which of the two is smaller: groups
// of both kinds count against that bound, each info file still shows its own value, and
// running out looks exactly as it does without AET (ENOSPC, "Out of RMIDs"; EBUSY while the
// only free RMIDs are in limbo).
func TestPerfPkgRMIDCap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ l3, pkg int }{{8, 3}, {3, 8}, {5, 5}, {6, 4}, {2, 64}} {
		t.Run(fmt.Sprintf("l3=%d,pkg=%d", tc.l3, tc.pkg), func(t *testing.T) {
			t.Parallel()
			sim := resctrlsim.MountT(t, resctrlsim.Options{NumRMIDs: tc.l3, PerfPkgDomains: 2, PerfPkgRMIDs: tc.pkg, LimboTime: time.Hour})
			d := sim.Dir
			for p, want := range map[string]int{"info/L3_MON/num_rmids": tc.l3, "info/PERF_PKG_MON/num_rmids": tc.pkg} {
				if got := strings.TrimSpace(read(t, filepath.Join(d, p))); got != fmt.Sprint(want) {
					t.Errorf("%s = %s, want %d", p, got, want)
				}
			}
			limit := min(tc.l3, tc.pkg)
			// The root holds RMID 0; a control group and then MON groups take the rest.
			made := []string{"c1"}
			mustMkdir(t, filepath.Join(d, "c1"))
			for i := 0; len(made) < limit-1; i++ {
				g := fmt.Sprintf("mon_groups/m%d", i)
				if i%2 == 1 {
					g = fmt.Sprintf("c1/mon_groups/m%d", i)
				}
				mustMkdir(t, filepath.Join(d, g))
				made = append(made, g)
			}
			wantErrno(t, "mkdir past the smaller num_rmids", os.Mkdir(filepath.Join(d, "mon_groups/over"), 0o755), syscall.ENOSPC)
			if got := read(t, filepath.Join(d, "info/last_cmd_status")); got != "Out of RMIDs\n" {
				t.Errorf("last_cmd_status %q at the cap", got)
			}
			if got := sim.Status().RMIDsUsed; got != limit {
				t.Errorf("%d RMIDs used at the cap, want %d", got, limit)
			}
			// A freed RMID is dirty for the limbo time: EBUSY, as without AET.
			last := made[len(made)-1]
			if err := syscall.Rmdir(filepath.Join(d, last)); err != nil {
				t.Fatal(err)
			}
			wantErrno(t, "mkdir while the freed RMID is in limbo", os.Mkdir(filepath.Join(d, last), 0o755), syscall.EBUSY)
			// Every group that exists has its energy domains.
			for _, g := range made[:len(made)-1] {
				if _, err := os.Stat(filepath.Join(d, g, "mon_data/mon_PERF_PKG_01/core_energy")); err != nil {
					t.Errorf("%s: %v", g, err)
				}
			}
		})
	}
}
