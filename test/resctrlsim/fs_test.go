package resctrlsim_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestInfoAndLayout(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{NumRMIDs: 8, L3Domains: 2})
	d := sim.Dir
	for path, want := range map[string]string{
		"info/L3_MON/num_rmids":               "8\n",
		"info/L3_MON/mon_features":            "llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n",
		"info/L3_MON/max_threshold_occupancy": "1048576\n",
		"info/L3/num_closids":                 "16\n",
		"info/last_cmd_status":                "ok\n",
		"schemata":                            "L3:0=7ff;1=7ff\n",
	} {
		if got := read(t, filepath.Join(d, path)); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	if got, want := names(t, d), []string{"cpus", "cpus_list", "info", "mode", "mon_data", "mon_groups", "schemata", "tasks"}; !slices.Equal(got, want) {
		t.Errorf("root lists %v, want %v", got, want)
	}
	if got := names(t, filepath.Join(d, "mon_data")); !slices.Equal(got, []string{"mon_L3_00", "mon_L3_01"}) {
		t.Errorf("mon_data lists %v", got)
	}
	if _, err := os.Stat(filepath.Join(d, "info/PERF_PKG_MON")); !os.IsNotExist(err) {
		t.Errorf("info/PERF_PKG_MON without AET: %v", err)
	}
	mustMkdir(t, filepath.Join(d, "mon_groups/g"))
	if got, want := names(t, filepath.Join(d, "mon_groups/g")), []string{"cpus", "cpus_list", "mon_data", "tasks"}; !slices.Equal(got, want) {
		t.Errorf("a new mon group lists %v, want %v", got, want)
	}
	if got := names(t, filepath.Join(d, "mon_groups/g/mon_data/mon_L3_01")); !slices.Equal(got, []string{"llc_occupancy", "mbm_local_bytes", "mbm_total_bytes"}) {
		t.Errorf("a mon group's domain lists %v", got)
	}
	if got := read(t, filepath.Join(d, "cpus_list")); got == "\n" {
		t.Errorf("root cpus_list is empty")
	}
}

func TestPerfPkgDomains(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{NumRMIDs: 32, PerfPkgDomains: 2, PerfPkgRMIDs: 3})
	d := sim.Dir
	if got := read(t, filepath.Join(d, "info/PERF_PKG_MON/mon_features")); got != "core_energy\nactivity\n" {
		t.Errorf("PERF_PKG mon_features = %q", got)
	}
	if got := names(t, filepath.Join(d, "mon_data")); !slices.Equal(got, []string{"mon_L3_00", "mon_PERF_PKG_00", "mon_PERF_PKG_01"}) {
		t.Errorf("mon_data lists %v", got)
	}
	v := read(t, filepath.Join(d, "mon_data/mon_PERF_PKG_01/core_energy"))
	if !strings.Contains(v, ".") {
		t.Errorf("core_energy %q has no decimals", v)
	}
	// The smaller num_rmids bounds the groups: PERF_PKG has 3, the root holds one.
	mustMkdir(t, filepath.Join(d, "mon_groups/a"))
	mustMkdir(t, filepath.Join(d, "mon_groups/b"))
	wantErrno(t, "mkdir past PERF_PKG's num_rmids", os.Mkdir(filepath.Join(d, "mon_groups/c"), 0o755), syscall.ENOSPC)
}

func TestMkdirRmdirRules(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{NumRMIDs: 4, NumCLOSIDs: 2, Debug: true})
	d := sim.Dir
	lastCmd := func() string { return strings.TrimSpace(read(t, filepath.Join(d, "info/last_cmd_status"))) }

	mustMkdir(t, filepath.Join(d, "mon_groups/a"))
	wantErrno(t, "mkdir of an existing group", os.Mkdir(filepath.Join(d, "mon_groups/a"), 0o755), syscall.EEXIST)
	wantErrno(t, "mkdir of a name with a newline", os.Mkdir(filepath.Join(d, "mon_groups/x\ny"), 0o755), syscall.EINVAL)
	for _, p := range []string{"mon_groups/a/sub", "mon_data/x", "info/x", "mon_groups/a/mon_data/x"} {
		wantErrno(t, "mkdir "+p, os.Mkdir(filepath.Join(d, p), 0o755), syscall.EPERM)
	}
	for _, p := range []string{"info", "mon_groups", "tasks"} {
		wantErrno(t, "mkdir of the root's own "+p, os.Mkdir(filepath.Join(d, p), 0o755), syscall.EEXIST)
	}
	for _, p := range []string{"info", "mon_groups", "mon_data", "mon_groups/a/mon_data"} {
		wantErrno(t, "rmdir "+p, syscall.Rmdir(filepath.Join(d, p)), syscall.EPERM)
	}
	wantErrno(t, "create a file", os.WriteFile(filepath.Join(d, "mon_groups/a/new"), nil, 0o644), syscall.EACCES)

	// A control group takes a CLOSID and an RMID and has its own mon_groups.
	mustMkdir(t, filepath.Join(d, "c1"))
	if got := strings.TrimSpace(read(t, filepath.Join(d, "c1/ctrl_hw_id"))); got != "1" {
		t.Errorf("c1 ctrl_hw_id = %s, want 1", got)
	}
	wantErrno(t, "mkdir past num_closids", os.Mkdir(filepath.Join(d, "c2"), 0o755), syscall.ENOSPC)
	if got := lastCmd(); got != "Out of CLOSIDs" {
		t.Errorf("last_cmd_status = %q after running out of CLOSIDs", got)
	}
	mustMkdir(t, filepath.Join(d, "c1/mon_groups/m"))
	// RMIDs 0 (root), a, c1 and c1/m: num_rmids 4 is used up.
	wantErrno(t, "mkdir past num_rmids", os.Mkdir(filepath.Join(d, "mon_groups/b"), 0o755), syscall.ENOSPC)
	if got := lastCmd(); got != "Out of RMIDs" {
		t.Errorf("last_cmd_status = %q after running out of RMIDs", got)
	}
	// Removing a control group removes its monitoring groups and frees all their RMIDs.
	if err := syscall.Rmdir(filepath.Join(d, "c1")); err != nil {
		t.Fatal(err)
	}
	if lastCmd() != "ok" {
		t.Errorf("last_cmd_status after a good rmdir = %q", lastCmd())
	}
	if _, err := os.Stat(filepath.Join(d, "c1")); !os.IsNotExist(err) {
		t.Errorf("c1 after rmdir: %v", err)
	}
	mustMkdir(t, filepath.Join(d, "mon_groups/b"))
	mustMkdir(t, filepath.Join(d, "mon_groups/c"))
	if got := len(sim.Status().Groups); got != 4 {
		t.Errorf("%d groups, want 4", got)
	}
}

func TestLimboRMIDsMakeMkdirBusy(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{NumRMIDs: 2, LimboTime: 300 * time.Millisecond, Debug: true})
	g := filepath.Join(sim.Dir, "mon_groups/g")
	mustMkdir(t, g)
	first := sim.RMID("mon_groups/g")
	if err := syscall.Rmdir(g); err != nil {
		t.Fatal(err)
	}
	// The only free RMID is dirty: EBUSY, not ENOSPC, and the kernel's words.
	wantErrno(t, "mkdir while the only free RMID is in limbo", os.Mkdir(g, 0o755), syscall.EBUSY)
	if got := read(t, filepath.Join(sim.Dir, "info/last_cmd_status")); got != "Out of RMIDs\n" {
		t.Errorf("last_cmd_status = %q", got)
	}
	if sim.Status().RMIDsInLimbo != 1 {
		t.Errorf("status shows %d RMIDs in limbo, want 1", sim.Status().RMIDsInLimbo)
	}
	eventually(t, "the RMID to leave limbo", func() bool { return os.Mkdir(g, 0o755) == nil })
	if sim.RMID("mon_groups/g") != first {
		t.Errorf("re-created group has RMID %d, want the drained %d", sim.RMID("mon_groups/g"), first)
	}
}

func TestCPUsAndSchemata(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	d := sim.Dir
	mustMkdir(t, filepath.Join(d, "mon_groups/g"))
	if err := write(filepath.Join(d, "mon_groups/g/cpus_list"), "0\n"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(d, "mon_groups/g/cpus")); got != "1\n" {
		t.Errorf("cpus after cpus_list 0 = %q", got)
	}
	wantErrno(t, "cpus_list of an offline cpu", write(filepath.Join(d, "mon_groups/g/cpus_list"), "4000"), syscall.EINVAL)
	wantErrno(t, "bad schemata", write(filepath.Join(d, "schemata"), "MB:0=10"), syscall.EINVAL)
	mustMkdir(t, filepath.Join(d, "c"))
	if err := write(filepath.Join(d, "c/schemata"), "L3:0=f\n"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(d, "c/schemata")); got != "L3:0=f\n" {
		t.Errorf("schemata = %q", got)
	}
}

func TestResetForgetsEveryGroup(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	mustMkdir(t, filepath.Join(sim.Dir, "mon_groups/g"))
	mustMkdir(t, filepath.Join(sim.Dir, "c"))
	sleeper := start(t, "sleep", "60")
	if err := write(filepath.Join(sim.Dir, "mon_groups/g/tasks"), itoa(sleeper.Process.Pid)); err != nil {
		t.Fatal(err)
	}
	sim.Reset()
	if got := names(t, filepath.Join(sim.Dir, "mon_groups")); len(got) != 0 {
		t.Errorf("mon_groups after reset: %v", got)
	}
	if _, err := os.Stat(filepath.Join(sim.Dir, "c")); !os.IsNotExist(err) {
		t.Errorf("control group after reset: %v", err)
	}
	if !has(t, filepath.Join(sim.Dir, "tasks"), sleeper.Process.Pid) {
		t.Errorf("after reset the task is not back in the root group")
	}
	mustMkdir(t, filepath.Join(sim.Dir, "mon_groups/g"))
}

// TestDomainsAreDistinctFiles: files of the same name in different domains (mon_L3_00 and
// mon_L3_01, info/L3_MON and info/PERF_PKG_MON) are different files, as in kernfs. They once
// shared an inode number, so go-fuse served whichever was looked up first for both: every
// L3 domain showed the first one's counts.
func TestDomainsAreDistinctFiles(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{NumRMIDs: 32, PerfPkgRMIDs: 8, L3Domains: 2, PerfPkgDomains: 1})
	d := sim.Dir
	if l3, pkg := read(t, filepath.Join(d, "info/L3_MON/num_rmids")), read(t, filepath.Join(d, "info/PERF_PKG_MON/num_rmids")); l3 != "32\n" || pkg != "8\n" {
		t.Errorf("num_rmids: L3_MON %q, PERF_PKG_MON %q; want 32 and 8", l3, pkg)
	}
	var st0, st1 syscall.Stat_t
	if err := errors.Join(syscall.Stat(filepath.Join(d, "mon_data/mon_L3_00/mbm_total_bytes"), &st0),
		syscall.Stat(filepath.Join(d, "mon_data/mon_L3_01/mbm_total_bytes"), &st1)); err != nil {
		t.Fatal(err)
	}
	if st0.Ino == st1.Ino {
		t.Errorf("mon_L3_00 and mon_L3_01's mbm_total_bytes share inode %d", st0.Ino)
	}
	// A spinning process pinned to CPU 1 counts in domain 1 only (CPU n is in L3 domain
	// n mod 2).
	var cpus unix.CPUSet
	if err := unix.SchedGetaffinity(0, &cpus); err != nil || !cpus.IsSet(1) {
		t.Skipf("CPU 1 is not ours to pin to (%v)", err)
	}
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var one unix.CPUSet
	one.Set(1)
	if err := unix.SchedSetaffinity(cmd.Process.Pid, &one); err != nil {
		t.Fatal(err)
	}
	g := filepath.Join(d, "mon_groups/pinned")
	mustMkdir(t, g)
	if err := write(filepath.Join(g, "tasks"), strconv.Itoa(cmd.Process.Pid)); err != nil {
		t.Fatal(err)
	}
	_ = read(t, filepath.Join(g, "mon_data/mon_L3_00/mbm_total_bytes")) // looked up first
	deadline := time.Now().Add(20 * time.Second)
	for read(t, filepath.Join(g, "mon_data/mon_PERF_PKG_00/core_energy")) == "0.000000\n" {
		if time.Now().After(deadline) {
			t.Fatal("the pinned process was never charged")
		}
		time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
	}
	dom0, dom1 := read(t, filepath.Join(g, "mon_data/mon_L3_00/mbm_total_bytes")), read(t, filepath.Join(g, "mon_data/mon_L3_01/mbm_total_bytes"))
	if dom0 != "0\n" || dom1 == "0\n" {
		t.Errorf("pinned to CPU 1: mon_L3_00 %q, mon_L3_01 %q; want 0 and a count", dom0, dom1)
	}
}
