package resctrlsim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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

// AET's event groups as intel_aet.c enable_events() leaves them: a group whose regions track
// fewer RMIDs than its XML wants is off unless forced (rdt=<name>), and its events are in no
// mon_PERF_PKG_NN and not in mon_features; a forced one counts only its regions' RMIDs, and
// PERF_PKG's num_rmids is the smallest enabled group's; with no group enabled there is no
// PERF_PKG at all. Swept over each group on, off and forced; group creation stops at the
// smaller of L3's and PERF_PKG's num_rmids every time.
func TestAETGroupsTurnedOff(t *testing.T) {
	t.Parallel()
	energy := []string{"activity", "core_energy"}
	perf := []string{"c1_res", "c6_res", "stalls_llc_hit", "stalls_llc_miss", "unhalted_core_cycles", "unhalted_ref_cycles", "uops_retired"}
	const l3 = 12
	for _, tc := range []struct {
		name    string
		groups  []resctrlsim.AETGroup
		events  []string // in mon_PERF_PKG_NN, sorted; nil: no PERF_PKG
		pkgRMID int
		off     int // log lines
	}{
		{"both enough", []resctrlsim.AETGroup{{Name: "energy"}, {Name: "perf"}}, append(slices.Clone(energy), perf...), resctrlsim.AETXMLRMIDs, 0},
		{"energy short", []resctrlsim.AETGroup{{Name: "energy", RMIDs: 300}, {Name: "perf"}}, perf, resctrlsim.AETXMLRMIDs, 1},
		{"energy forced", []resctrlsim.AETGroup{{Name: "energy", RMIDs: 5, Force: true}, {Name: "perf"}}, append(slices.Clone(energy), perf...), 5, 0},
		{"perf short", []resctrlsim.AETGroup{{Name: "energy"}, {Name: "perf", RMIDs: 9}}, energy, resctrlsim.AETXMLRMIDs, 1},
		{"perf alone forced", []resctrlsim.AETGroup{{Name: "perf", RMIDs: 3, Force: true}}, perf, 3, 0},
		{"both short", []resctrlsim.AETGroup{{Name: "energy", RMIDs: 100}, {Name: "perf", RMIDs: 100}}, nil, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sim := resctrlsim.MountT(t, resctrlsim.Options{NumRMIDs: l3, PerfPkgDomains: 2, AETGroups: tc.groups})
			d := sim.Dir
			slices.Sort(tc.events)
			if got := sim.Status().AETOff; len(got) != tc.off {
				t.Errorf("kernel log %q, want %d line(s)", got, tc.off)
			}
			mustMkdir(t, filepath.Join(d, "mon_groups/m0"))
			domains := names(t, filepath.Join(d, "mon_groups/m0/mon_data"))
			info := names(t, filepath.Join(d, "info"))
			if tc.events == nil {
				if slices.Contains(domains, "mon_PERF_PKG_00") || slices.Contains(info, "PERF_PKG_MON") {
					t.Errorf("no AET group enabled, yet mon_data %q, info %q", domains, info)
				}
			} else {
				for _, dom := range []string{"mon_PERF_PKG_00", "mon_PERF_PKG_01"} {
					got := names(t, filepath.Join(d, "mon_groups/m0/mon_data", dom))
					if !slices.Equal(got, tc.events) {
						t.Errorf("%s holds %q, want %q", dom, got, tc.events)
					}
					for _, f := range got {
						v := strings.TrimSpace(read(t, filepath.Join(d, "mon_groups/m0/mon_data", dom, f)))
						if _, err := strconv.ParseFloat(v, 64); err != nil {
							t.Errorf("%s/%s reads %q", dom, f, v)
						}
					}
				}
				features := strings.Fields(read(t, filepath.Join(d, "info/PERF_PKG_MON/mon_features")))
				slices.Sort(features)
				if !slices.Equal(features, tc.events) {
					t.Errorf("mon_features %q, want %q", features, tc.events)
				}
				if got := strings.TrimSpace(read(t, filepath.Join(d, "info/PERF_PKG_MON/num_rmids"))); got != strconv.Itoa(tc.pkgRMID) {
					t.Errorf("PERF_PKG num_rmids %s, want %d", got, tc.pkgRMID)
				}
			}
			limit := l3
			if tc.events != nil {
				limit = min(l3, tc.pkgRMID)
			}
			// The root and m0 hold two; the rest run out at the limit.
			for i := 2; i < limit; i++ {
				mustMkdir(t, filepath.Join(d, "mon_groups", fmt.Sprint("m", i)))
			}
			wantErrno(t, "mkdir past the limit", os.Mkdir(filepath.Join(d, "mon_groups/over"), 0o755), syscall.ENOSPC)
		})
	}
}

// Options that no boot produces are refused, saying why.
func TestAETGroupsRefused(t *testing.T) {
	t.Parallel()
	for _, o := range []resctrlsim.Options{
		{PerfPkgDomains: 1, AETGroups: []resctrlsim.AETGroup{{Name: "power"}}},
		{PerfPkgDomains: 1, AETGroups: []resctrlsim.AETGroup{{Name: "perf"}, {Name: "perf"}}},
		{PerfPkgDomains: 1, AETGroups: []resctrlsim.AETGroup{{Name: "perf", RMIDs: -1}}},
		{PerfPkgDomains: 1, PerfPkgRMIDs: 9, AETGroups: []resctrlsim.AETGroup{{Name: "perf"}}},
		{AETGroups: []resctrlsim.AETGroup{{Name: "perf"}}},
	} {
		if _, err := resctrlsim.Mount(t.TempDir(), o); err == nil || !strings.Contains(err.Error(), "resctrlsim options") {
			t.Errorf("%+v: %v, want the options refused", o, err)
		}
	}
}

func TestParseAETGroup(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]resctrlsim.AETGroup{
		"energy":         {Name: "energy"},
		"perf:300":       {Name: "perf", RMIDs: 300},
		"energy:5:force": {Name: "energy", RMIDs: 5, Force: true},
		"perf:0":         {Name: "perf"},
	} {
		if got, err := resctrlsim.ParseAETGroup(in); err != nil || got != want {
			t.Errorf("ParseAETGroup(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "power", "perf:", "perf:x", "perf:-1", "perf:3:forced", "perf:3:force:1", "energy::force"} {
		if _, err := resctrlsim.ParseAETGroup(bad); err == nil {
			t.Errorf("ParseAETGroup(%q) accepted", bad)
		}
	}
}

// Whatever the command line says, ParseAETGroup gives a group Mount accepts or an error.
func FuzzParseAETGroup(f *testing.F) {
	for _, s := range []string{"energy", "perf:300:force", "perf:x", ":::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := resctrlsim.ParseAETGroup(s)
		if err != nil {
			return
		}
		if (g.Name != "energy" && g.Name != "perf") || g.RMIDs < 0 {
			t.Errorf("%q: %+v", s, g)
		}
	})
}
