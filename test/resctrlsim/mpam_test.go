package resctrlsim_test

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// Arm MPAM's fixed mode (fs/resctrl/monitor.c of Linux v7.2, ee3d4c81d89c):
// mbm_assign_mode lists only the current mode; a switch to "default" is refused with EINVAL
// and "Counter assignment mode is not configurable", and changes nothing; writing the current
// mode succeeds; garbage is refused as before. event_filter is read only (94a1206522d1).
func TestMPAMFixedMode(t *testing.T) {
	t.Parallel()
	f := newAssignFixture(t, resctrlsim.Options{MPAMFixed: true, MBMCounters: 4})
	const mode = "info/L3_MON/mbm_assign_mode"
	if got := f.read(mode); got != "[mbm_event]\n" {
		t.Errorf("mbm_assign_mode %q, want only [mbm_event]", got)
	}
	mustMkdir(t, f.path("mon_groups/a"))
	before := f.assignments("mon_groups/a")

	for _, c := range []struct {
		write, lastCmd string
		errno          syscall.Errno
	}{
		{"default\n", "Counter assignment mode is not configurable", syscall.EINVAL},
		{"bogus\n", "Unsupported assign mode", syscall.EINVAL},
		{"mbm_event\n", "ok", 0},
		{"default", "ok", syscall.EINVAL}, // no newline: refused before last_cmd_status is touched
	} {
		err := write(f.path(mode), c.write)
		if c.errno == 0 {
			if err != nil {
				t.Errorf("write %q: %v", c.write, err)
			}
		} else {
			wantErrno(t, "write "+c.write, err, c.errno)
		}
		if got := f.lastCmd(); got != c.lastCmd {
			t.Errorf("write %q: last_cmd_status %q, want %q", c.write, got, c.lastCmd)
		}
		if got := f.read(mode); got != "[mbm_event]\n" {
			t.Errorf("after writing %q: mbm_assign_mode %q", c.write, got)
		}
		if got := f.assignments("mon_groups/a"); got != before {
			t.Errorf("after writing %q: a's assignments %q, were %q (a refused switch frees nothing)", c.write, got, before)
		}
	}
	if got := f.read("info/L3_MON/available_mbm_cntrs"); got != "0=0\n" {
		t.Errorf("available_mbm_cntrs %q, want 0=0 (root and a hold all four)", got)
	}

	filter := f.path("info/L3_MON/event_configs/mbm_total_bytes/event_filter")
	st, err := os.Stat(filter)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o222 != 0 {
		t.Errorf("event_filter mode %v, want read only", st.Mode().Perm())
	}
	_, err = os.OpenFile(filter, os.O_WRONLY, 0)
	wantErrno(t, "open event_filter for writing", err, syscall.EACCES)
}

// The rest is mbm_event mode: assignments can be moved, mbm_assign_on_mkdir turned off, and a
// group without a counter reads Unassigned while the others count.
func TestMPAMFixedAssignments(t *testing.T) {
	t.Parallel()
	f := newAssignFixture(t, resctrlsim.Options{MPAMFixed: true, MBMCounters: 4})
	mustMkdir(t, f.path("mon_groups/a"))
	mustMkdir(t, f.path("mon_groups/b")) // no counter left
	if got := f.read("mon_groups/b/mon_data/mon_L3_00/mbm_total_bytes"); got != "Unassigned\n" {
		t.Errorf("b without a counter reads %q", got)
	}
	f.mustWrite("mon_groups/a/mbm_L3_assignments", "mbm_total_bytes:0=_\n")
	f.mustWrite("mon_groups/b/mbm_L3_assignments", "mbm_total_bytes:0=e\n")
	if got := f.assignments("mon_groups/b"); got != "mbm_total_bytes:0=e\nmbm_local_bytes:0=_\n" {
		t.Errorf("b after the move: %q", got)
	}
	f.mustWrite("info/L3_MON/mbm_assign_on_mkdir", "0\n")
	if got := f.read("info/L3_MON/mbm_assign_on_mkdir"); got != "0\n" {
		t.Errorf("mbm_assign_on_mkdir %q", got)
	}
	for _, g := range []string{"", "mon_groups/a", "mon_groups/b"} {
		for _, ev := range []string{"llc_occupancy", "mbm_total_bytes", "mbm_local_bytes"} {
			if _, err := f.readErr(g + "/mon_data/mon_L3_00/" + ev); err != nil {
				t.Errorf("read %s of %q: %v", ev, g, err)
			}
		}
	}
}

// MPAMFixed is mbm_event mode: with any other MBMAssign the options are refused.
func TestMPAMFixedOptions(t *testing.T) {
	t.Parallel()
	for _, a := range []resctrlsim.MBMAssign{resctrlsim.MBMAssignDefault, resctrlsim.MBMAssignDefaultOnly} {
		_, err := resctrlsim.Mount(t.TempDir(), resctrlsim.Options{MPAMFixed: true, MBMAssign: a})
		if err == nil || !strings.Contains(err.Error(), "mpam fixed") {
			t.Errorf("MPAMFixed with %q: %v, want the options refused", a, err)
		}
	}
}
