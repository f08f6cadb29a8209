package resctrlsim_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// assignFixture is a mount in mbm_event mode and the ways tests look at it.
type assignFixture struct {
	t   *testing.T
	sim *resctrlsim.Sim
}

func newAssignFixture(t *testing.T, o resctrlsim.Options) assignFixture {
	t.Helper()
	return assignFixture{t: t, sim: resctrlsim.MountT(t, o)}
}

func (f assignFixture) path(p string) string { return filepath.Join(f.sim.Dir, p) }

func (f assignFixture) read(p string) string {
	f.t.Helper()
	return read(f.t, f.path(p))
}

func (f assignFixture) lastCmd() string {
	f.t.Helper()
	return strings.TrimSuffix(f.read("info/last_cmd_status"), "\n")
}

// readErr reads a file that may refuse: the error, and what last_cmd_status says then.
func (f assignFixture) readErr(p string) (string, error) {
	b, err := os.ReadFile(f.path(p))
	return string(b), err
}

func (f assignFixture) assignments(group string) string {
	f.t.Helper()
	return f.read(filepath.Join(group, "mbm_L3_assignments"))
}

func (f assignFixture) mustWrite(p, s string) {
	f.t.Helper()
	if err := write(f.path(p), s); err != nil {
		f.t.Fatalf("write %q to %s: %v (last_cmd_status %q)", s, p, err, f.lastCmd())
	}
}

// The info files and the root's assignments on a fresh mount, as the kernel's documentation
// shows them: the root group took one counter per event in every domain at mount.
func TestAssignInfoFiles(t *testing.T) {
	t.Parallel()
	f := newAssignFixture(t, resctrlsim.Options{MBMAssign: resctrlsim.MBMAssignEvent, MBMCounters: 32, L3Domains: 2})
	for p, want := range map[string]string{
		"info/L3_MON/mbm_assign_mode":                            "[mbm_event]\ndefault\n",
		"info/L3_MON/num_mbm_cntrs":                              "0=32;1=32\n",
		"info/L3_MON/available_mbm_cntrs":                        "0=30;1=30\n",
		"info/L3_MON/mbm_assign_on_mkdir":                        "1\n",
		"info/L3_MON/event_configs/mbm_local_bytes/event_filter": "local_reads,local_non_temporal_writes,local_reads_slow_memory\n",
		"info/L3_MON/event_configs/mbm_total_bytes/event_filter": "local_reads,remote_reads,local_non_temporal_writes,remote_non_temporal_writes,local_reads_slow_memory,remote_reads_slow_memory,dirty_victim_writes_all\n",
		"mbm_L3_assignments":                                     "mbm_total_bytes:0=e;1=e\nmbm_local_bytes:0=e;1=e\n",
		"info/L3_MON/mon_features":                               "llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n",
		"info/last_cmd_status":                                   "ok\n",
	} {
		if got := f.read(p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if got := names(t, f.path("info/L3_MON/event_configs")); !slices.Equal(got, []string{"mbm_local_bytes", "mbm_total_bytes"}) {
		t.Errorf("event_configs lists %v", got)
	}
	mustMkdir(t, f.path("mon_groups/g"))
	if got := names(t, f.path("mon_groups/g")); !slices.Contains(got, "mbm_L3_assignments") {
		t.Errorf("a mon group lists %v, without mbm_L3_assignments", got)
	}
	wantErrno(t, "mkdir over the root's mbm_L3_assignments", os.Mkdir(f.path("mbm_L3_assignments"), 0o755), syscall.EEXIST)
}

// Without the option the simulator is a kernel before 6.18: none of the files.
func TestAssignAbsentByDefault(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	for _, p := range []string{"info/L3_MON/mbm_assign_mode", "info/L3_MON/num_mbm_cntrs", "mbm_L3_assignments"} {
		if _, err := os.Stat(filepath.Join(sim.Dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s without assignment mode: %v", p, err)
		}
	}
}

// More groups than counters: mkdir succeeds while counters last and after, the groups
// without one read Unassigned (their llc_occupancy still counts), rmdir gives the counters
// back, and a later assignment uses them.
func TestMkdirBeyondCounters(t *testing.T) {
	t.Parallel()
	// 8 counters a domain: the root and three groups hold two each, the fifth group none.
	f := newAssignFixture(t, resctrlsim.Options{MBMAssign: resctrlsim.MBMAssignEvent, MBMCounters: 8, L3Domains: 2})
	for _, g := range []string{"a", "b", "c"} {
		mustMkdir(t, f.path("mon_groups/"+g))
		if got := f.lastCmd(); got != "ok" {
			t.Errorf("mkdir %s with counters left: last_cmd_status %q", g, got)
		}
	}
	if got := f.read("info/L3_MON/available_mbm_cntrs"); got != "0=0;1=0\n" {
		t.Fatalf("available_mbm_cntrs %q after three groups", got)
	}
	mustMkdir(t, f.path("mon_groups/late"))
	want := "Failed to allocate counter for mbm_total_bytes in domain 0\nFailed to allocate counter for mbm_local_bytes in domain 0"
	if got := f.lastCmd(); got != want {
		t.Errorf("mkdir past the counters: last_cmd_status %q, want %q", got, want)
	}
	if got := f.assignments("mon_groups/late"); got != "mbm_total_bytes:0=_;1=_\nmbm_local_bytes:0=_;1=_\n" {
		t.Errorf("late group's assignments %q", got)
	}
	for _, dom := range []string{"mon_L3_00", "mon_L3_01"} {
		for _, ev := range []string{"mbm_total_bytes", "mbm_local_bytes"} {
			if got := f.read("mon_groups/late/mon_data/" + dom + "/" + ev); got != "Unassigned\n" {
				t.Errorf("late %s/%s = %q, want Unassigned", dom, ev, got)
			}
			if got := f.read("mon_groups/a/mon_data/" + dom + "/" + ev); got == "Unassigned\n" {
				t.Errorf("a %s/%s reads Unassigned with a counter", dom, ev)
			}
		}
	}
	if got := f.read("mon_groups/late/mon_data/mon_L3_00/llc_occupancy"); got == "Unassigned\n" {
		t.Errorf("llc_occupancy needs no counter, reads %q", got)
	}
	if err := syscall.Rmdir(f.path("mon_groups/a")); err != nil {
		t.Fatal(err)
	}
	if got := f.read("info/L3_MON/available_mbm_cntrs"); got != "0=2;1=2\n" {
		t.Errorf("available_mbm_cntrs %q after rmdir, want 0=2;1=2", got)
	}
	f.mustWrite("mon_groups/late/mbm_L3_assignments", "mbm_total_bytes:*=e\n")
	if got := f.assignments("mon_groups/late"); got != "mbm_total_bytes:0=e;1=e\nmbm_local_bytes:0=_;1=_\n" {
		t.Errorf("late group after assigning mbm_total_bytes: %q", got)
	}
	if got := f.read("mon_groups/late/mon_data/mon_L3_01/mbm_total_bytes"); got == "Unassigned\n" {
		t.Errorf("assigned counter still reads Unassigned")
	}
	// A control group's MON groups give their counters back with it.
	mustMkdir(t, f.path("c1"))
	mustMkdir(t, f.path("c1/mon_groups/m"))
	if err := syscall.Rmdir(f.path("c1")); err != nil {
		t.Fatal(err)
	}
	if got := f.read("info/L3_MON/available_mbm_cntrs"); got != "0=1;1=1\n" {
		t.Errorf("available_mbm_cntrs %q after removing c1 and its MON group, want 0=1;1=1", got)
	}
}

// Every syntax of the assignments file through the mount: what is applied, and for what the
// kernel refuses, its errno and last_cmd_status.
func TestAssignmentsWrites(t *testing.T) {
	t.Parallel()
	f := newAssignFixture(t, resctrlsim.Options{MBMAssign: resctrlsim.MBMAssignEvent, MBMCounters: 8, L3Domains: 2})
	const all = "mbm_total_bytes:0=e;1=e\nmbm_local_bytes:0=e;1=e\n"
	for i, tc := range []struct {
		write   string
		errno   syscall.Errno
		lastCmd string
		after   string
	}{
		{write: "mbm_total_bytes:0=_\n", after: "mbm_total_bytes:0=_;1=e\nmbm_local_bytes:0=e;1=e\n"},
		{write: "mbm_total_bytes:*=_\n", after: "mbm_total_bytes:0=_;1=_\nmbm_local_bytes:0=e;1=e\n"},
		{write: "mbm_total_bytes:0=_;1=_\nmbm_local_bytes:1=_\n", after: "mbm_total_bytes:0=_;1=_\nmbm_local_bytes:0=e;1=_\n"},
		{write: "mbm_local_bytes: 1=_ ;\n", after: "mbm_total_bytes:0=e;1=e\nmbm_local_bytes:0=e;1=_\n"},
		{write: "mbm_total_bytes:*=_;0=e\n", after: "mbm_total_bytes:0=_;1=_\nmbm_local_bytes:0=e;1=e\n"},
		{write: "mbm_total_bytes:+1=_\n", after: "mbm_total_bytes:0=e;1=_\nmbm_local_bytes:0=e;1=e\n"},
		{write: "mbm_total_bytes:0=e\n", after: all}, // already assigned: nothing to do
		{write: "mbm_total_bytes\n", after: all},     // no domain: nothing to do
		{write: "mbm_total_bytes:0=_\nbogus:0=_\n", errno: syscall.ENOENT, lastCmd: "Invalid event bogus",
			after: "mbm_total_bytes:0=_;1=e\nmbm_local_bytes:0=e;1=e\n"},
		{write: "llc_occupancy:0=e\n", errno: syscall.ENOENT, lastCmd: "Invalid event llc_occupancy", after: all},
		{write: "\n", errno: syscall.ENOENT, lastCmd: "Invalid event ", after: all},
		{write: "mbm_total_bytes:2=_\n", errno: syscall.EINVAL, lastCmd: "Invalid domain id 2", after: all},
		{write: "mbm_total_bytes:x=_\n", errno: syscall.EINVAL, lastCmd: "Missing domain id", after: all},
		{write: "mbm_total_bytes:0 =_\n", errno: syscall.EINVAL, lastCmd: "Missing domain id", after: all},
		{write: "mbm_total_bytes:0=x\n", errno: syscall.EINVAL, lastCmd: "Assign operation 'mbm_total_bytes:0=x' failed", after: all},
		{write: "mbm_total_bytes:0=ee\n", errno: syscall.EINVAL, lastCmd: "Assign operation 'mbm_total_bytes:0=ee' failed", after: all},
		{write: "mbm_total_bytes:0\n", errno: syscall.EINVAL, lastCmd: "Assign operation 'mbm_total_bytes:0=(null)' failed", after: all},
		{write: "mbm_total_bytes:*=x\n", errno: syscall.EINVAL, lastCmd: "Assign operation 'mbm_total_bytes:*=x' failed", after: all},
		// Without the trailing newline the kernel refuses before it clears last_cmd_status.
		{write: "mbm_total_bytes:0=_", errno: syscall.EINVAL, lastCmd: "ok", after: all},
	} {
		g := "mon_groups/g" + itoa(i)
		mustMkdir(t, f.path(g))
		if got := f.assignments(g); got != all {
			t.Fatalf("%q: a new group's assignments %q", tc.write, got)
		}
		err := write(f.path(g+"/mbm_L3_assignments"), tc.write)
		switch {
		case tc.errno == 0 && err != nil:
			t.Errorf("%q: %v (last_cmd_status %q)", tc.write, err, f.lastCmd())
		case tc.errno != 0 && !errors.Is(err, tc.errno):
			t.Errorf("%q: got %v, want %v", tc.write, err, tc.errno)
		}
		want := tc.lastCmd
		if want == "" {
			want = "ok"
		}
		if got := f.lastCmd(); got != want {
			t.Errorf("%q: last_cmd_status %q, want %q", tc.write, got, want)
		}
		if got := f.assignments(g); got != tc.after {
			t.Errorf("%q: assignments %q, want %q", tc.write, got, tc.after)
		}
		if err := syscall.Rmdir(f.path(g)); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.read("info/L3_MON/available_mbm_cntrs"); got != "0=6;1=6\n" {
		t.Errorf("counters leaked: available_mbm_cntrs %q, want 0=6;1=6", got)
	}
}

// An assignment starts the count from zero, and an unassigned event counts nothing: a busy
// group's counter, taken away and given back, reads less than it did.
func TestReassignResetsCount(t *testing.T) {
	t.Parallel()
	f := newAssignFixture(t, resctrlsim.Options{MBMAssign: resctrlsim.MBMAssignEvent, MBMCounters: 4})
	g := "mon_groups/busy"
	mustMkdir(t, f.path(g))
	spin := start(t, "sh", "-c", "while :; do :; done").Process.Pid
	f.mustWrite(g+"/tasks", itoa(spin))
	total := func() float64 { return counter(t, f.path(g+"/mon_data/mon_L3_00/mbm_total_bytes")) }
	local := func() float64 { return counter(t, f.path(g+"/mon_data/mon_L3_00/mbm_local_bytes")) }
	eventually(t, "the busy group to count 1 GB", func() bool { return total() > 1e9 })
	before, localBefore := total(), local()
	f.mustWrite(g+"/mbm_L3_assignments", "mbm_total_bytes:0=_\n")
	if got := f.read(g + "/mon_data/mon_L3_00/mbm_total_bytes"); got != "Unassigned\n" {
		t.Fatalf("unassigned mbm_total_bytes reads %q", got)
	}
	f.mustWrite(g+"/mbm_L3_assignments", "mbm_total_bytes:0=e\n")
	if after := total(); after >= before {
		t.Errorf("mbm_total_bytes after reassignment %v, not below the %v before: no reset", after, before)
	}
	if l := local(); l < localBefore {
		t.Errorf("mbm_local_bytes, never unassigned, went back from %v to %v", localBefore, l)
	}
	_ = syscall.Kill(spin, syscall.SIGKILL)
}

// A control group (the root too) reads Unassigned only when neither it nor any of its MON
// groups has a counter for the event in that domain.
func TestControlGroupUnassigned(t *testing.T) {
	t.Parallel()
	f := newAssignFixture(t, resctrlsim.Options{MBMAssign: resctrlsim.MBMAssignEvent, MBMCounters: 8})
	mustMkdir(t, f.path("c1"))
	mustMkdir(t, f.path("c1/mon_groups/m"))
	f.mustWrite("c1/mbm_L3_assignments", "mbm_total_bytes:*=_\n")
	if got := f.read("c1/mon_data/mon_L3_00/mbm_total_bytes"); got == "Unassigned\n" {
		t.Errorf("c1 reads Unassigned while its MON group m has a counter")
	}
	f.mustWrite("c1/mon_groups/m/mbm_L3_assignments", "mbm_total_bytes:*=_\n")
	if got := f.read("c1/mon_data/mon_L3_00/mbm_total_bytes"); got != "Unassigned\n" {
		t.Errorf("c1 with no counter in it or its MON groups reads %q", got)
	}
	f.mustWrite("mbm_L3_assignments", "mbm_local_bytes:0=_\n")
	if got := f.read("mon_data/mon_L3_00/mbm_local_bytes"); got != "Unassigned\n" {
		t.Errorf("the root without a counter (and its MON groups without) reads %q", got)
	}
}

// mbm_assign_on_mkdir 0: new groups get no counter and mkdir says nothing; bad values are
// refused as kstrtobool refuses them.
func TestAssignOnMkdir(t *testing.T) {
	t.Parallel()
	f := newAssignFixture(t, resctrlsim.Options{MBMAssign: resctrlsim.MBMAssignEvent, MBMCounters: 8})
	f.mustWrite("info/L3_MON/mbm_assign_on_mkdir", "0\n")
	if got := f.read("info/L3_MON/mbm_assign_on_mkdir"); got != "0\n" {
		t.Errorf("mbm_assign_on_mkdir %q after writing 0", got)
	}
	mustMkdir(t, f.path("mon_groups/g"))
	if got, cmd := f.assignments("mon_groups/g"), f.lastCmd(); got != "mbm_total_bytes:0=_\nmbm_local_bytes:0=_\n" || cmd != "ok" {
		t.Errorf("mkdir without assignment on mkdir: %q, last_cmd_status %q", got, cmd)
	}
	for _, bad := range []string{"2\n", "x\n", "\n"} {
		wantErrno(t, "mbm_assign_on_mkdir "+bad, write(f.path("info/L3_MON/mbm_assign_on_mkdir"), bad), syscall.EINVAL)
	}
	f.mustWrite("info/L3_MON/mbm_assign_on_mkdir", "on")
	mustMkdir(t, f.path("mon_groups/h"))
	if got := f.assignments("mon_groups/h"); got != "mbm_total_bytes:0=e\nmbm_local_bytes:0=e\n" {
		t.Errorf("mkdir with assignment on mkdir back on: %q", got)
	}
}

// Switching the mode: to default every group counts again and the mbm_event files refuse;
// back to mbm_event every counter is free and every group, the root included, reads
// Unassigned until assigned; mbm_assign_on_mkdir is on again.
func TestAssignModeSwitch(t *testing.T) {
	t.Parallel()
	f := newAssignFixture(t, resctrlsim.Options{MBMAssign: resctrlsim.MBMAssignEvent, MBMCounters: 4})
	mustMkdir(t, f.path("mon_groups/a"))
	mustMkdir(t, f.path("mon_groups/b")) // no counter left for b
	f.mustWrite("info/L3_MON/mbm_assign_on_mkdir", "0")
	f.mustWrite("info/L3_MON/mbm_assign_mode", "default\n")
	if got := f.read("info/L3_MON/mbm_assign_mode"); got != "mbm_event\n[default]\n" {
		t.Errorf("mode after switching to default: %q", got)
	}
	if got := f.read("mon_groups/b/mon_data/mon_L3_00/mbm_total_bytes"); got == "Unassigned\n" {
		t.Errorf("default mode: b still reads Unassigned")
	}
	for p, msg := range map[string]string{
		"mon_groups/a/mbm_L3_assignments":                        "mbm_event counter assignment mode is not enabled",
		"info/L3_MON/available_mbm_cntrs":                        "mbm_event mode is not enabled",
		"info/L3_MON/mbm_assign_on_mkdir":                        "mbm_event mode is not enabled",
		"info/L3_MON/event_configs/mbm_total_bytes/event_filter": "mbm_event counter assignment mode is not enabled",
	} {
		_, err := f.readErr(p)
		wantErrno(t, "read "+p+" in default mode", err, syscall.EINVAL)
		if got := f.lastCmd(); got != msg {
			t.Errorf("read %s in default mode: last_cmd_status %q, want %q", p, got, msg)
		}
	}
	wantErrno(t, "assign in default mode", write(f.path("mon_groups/a/mbm_L3_assignments"), "mbm_total_bytes:0=e\n"), syscall.EINVAL)
	if got := f.lastCmd(); got != "mbm_event mode is not enabled" {
		t.Errorf("assign in default mode: last_cmd_status %q", got)
	}
	if got := f.read("info/L3_MON/num_mbm_cntrs"); got != "0=4\n" {
		t.Errorf("num_mbm_cntrs in default mode %q", got)
	}
	for _, bad := range []string{"bogus\n", "mbm_event", "mbm_event \n"} {
		err := write(f.path("info/L3_MON/mbm_assign_mode"), bad)
		wantErrno(t, "mode "+bad, err, syscall.EINVAL)
	}
	if got := f.lastCmd(); got != "Unsupported assign mode" {
		t.Errorf("last_cmd_status %q after an unknown mode", got)
	}

	f.mustWrite("info/L3_MON/mbm_assign_mode", "mbm_event\n")
	if got := f.read("info/L3_MON/available_mbm_cntrs"); got != "0=4\n" {
		t.Errorf("available_mbm_cntrs after switching to mbm_event: %q, want every counter free", got)
	}
	for _, g := range []string{"", "mon_groups/a", "mon_groups/b"} {
		if got := f.read(filepath.Join(g, "mon_data/mon_L3_00/mbm_total_bytes")); got != "Unassigned\n" {
			t.Errorf("%q after switching to mbm_event reads %q, want Unassigned", g, got)
		}
	}
	if got := f.read("info/L3_MON/mbm_assign_on_mkdir"); got != "1\n" {
		t.Errorf("mbm_assign_on_mkdir after switching to mbm_event: %q, want 1", got)
	}
	mustMkdir(t, f.path("mon_groups/c"))
	if got := f.assignments("mon_groups/c"); got != "mbm_total_bytes:0=e\nmbm_local_bytes:0=e\n" {
		t.Errorf("a new group after the switch: %q", got)
	}
}

// A 6.18 kernel on hardware without assignable counters: mbm_assign_mode says "[default]",
// refuses mbm_event, and nothing else of the interface exists.
func TestAssignDefaultOnly(t *testing.T) {
	t.Parallel()
	f := newAssignFixture(t, resctrlsim.Options{MBMAssign: resctrlsim.MBMAssignDefaultOnly})
	if got := f.read("info/L3_MON/mbm_assign_mode"); got != "[default]\n" {
		t.Errorf("mbm_assign_mode %q", got)
	}
	wantErrno(t, "switch to mbm_event", write(f.path("info/L3_MON/mbm_assign_mode"), "mbm_event\n"), syscall.EINVAL)
	if got := f.lastCmd(); got != "mbm_event mode is not supported" {
		t.Errorf("last_cmd_status %q", got)
	}
	f.mustWrite("info/L3_MON/mbm_assign_mode", "default\n")
	for _, p := range []string{"info/L3_MON/num_mbm_cntrs", "info/L3_MON/event_configs", "mbm_L3_assignments"} {
		if _, err := os.Stat(f.path(p)); !os.IsNotExist(err) {
			t.Errorf("%s without assignable counters: %v", p, err)
		}
	}
	mustMkdir(t, f.path("mon_groups/g"))
	if got := f.read("mon_groups/g/mon_data/mon_L3_00/mbm_total_bytes"); got == "Unassigned\n" {
		t.Errorf("default-only: a group reads Unassigned")
	}
}

// A mount made in default mode on ABMC hardware counts everywhere and can be switched on.
func TestAssignMountedInDefault(t *testing.T) {
	t.Parallel()
	f := newAssignFixture(t, resctrlsim.Options{MBMAssign: resctrlsim.MBMAssignDefault, MBMCounters: 2})
	if got := f.read("info/L3_MON/mbm_assign_mode"); got != "mbm_event\n[default]\n" {
		t.Errorf("mbm_assign_mode %q", got)
	}
	mustMkdir(t, f.path("mon_groups/g"))
	if got := f.read("mon_groups/g/mon_data/mon_L3_00/mbm_total_bytes"); got == "Unassigned\n" {
		t.Errorf("default mode: a group reads Unassigned")
	}
	f.mustWrite("info/L3_MON/mbm_assign_mode", "mbm_event\n")
	if got := f.read("mon_groups/g/mon_data/mon_L3_00/mbm_total_bytes"); got != "Unassigned\n" {
		t.Errorf("after switching on: %q, want Unassigned", got)
	}
}
