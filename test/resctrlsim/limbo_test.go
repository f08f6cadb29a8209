package resctrlsim_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// The kernel's limbo through the mount (fs/resctrl/monitor.c): an rmdir'd group's RMID is in
// limbo even when its occupancy is nil, until the worker's pass; one whose lines are still
// counted (its occupancy at or above info/L3_MON/max_threshold_occupancy) stays there until
// they go, or until the threshold is raised above them. The worker runs on its own too.
func TestLimboLeavesOnTheWorkersPass(t *testing.T) {
	t.Parallel()
	for _, occ := range []uint64{0, resctrlsim.MaxThresholdOccupancy / 2, resctrlsim.MaxThresholdOccupancy, 4 * resctrlsim.MaxThresholdOccupancy} {
		t.Run(strconv.FormatUint(occ, 10), func(t *testing.T) {
			t.Parallel()
			// An hour between the worker's own passes: only LimboPass runs one.
			sim := resctrlsim.MountT(t, resctrlsim.Options{NumRMIDs: 2, Limbo: true, LimboInterval: 1 << 62})
			g := filepath.Join(sim.Dir, "mon_groups/g")
			mustMkdir(t, g)
			sim.SetOccupancy("mon_groups/g", occ)
			if got := read(t, filepath.Join(g, "mon_data/mon_L3_00/llc_occupancy")); got != strconv.FormatUint(occ, 10)+"\n" {
				t.Fatalf("llc_occupancy = %q, want the test's %d", got, occ)
			}
			if err := syscall.Rmdir(g); err != nil {
				t.Fatal(err)
			}
			wantErrno(t, "mkdir right after the rmdir", os.Mkdir(g, 0o755), syscall.EBUSY)
			clean := occ < resctrlsim.MaxThresholdOccupancy
			if freed := sim.LimboPass(); (freed == 1) != clean {
				t.Fatalf("the worker's pass freed %d RMIDs; occupancy %d, threshold %d", freed, occ, resctrlsim.MaxThresholdOccupancy)
			}
			if !clean {
				wantErrno(t, "mkdir while the lines are still counted", os.Mkdir(g, 0o755), syscall.EBUSY)
				// An administrator raises the threshold above them.
				if err := write(filepath.Join(sim.Dir, "info/L3_MON/max_threshold_occupancy"), strconv.FormatUint(occ+65536, 10)+"\n"); err != nil {
					t.Fatal(err)
				}
				if sim.LimboPass() != 1 {
					t.Fatalf("the RMID stayed in limbo under a threshold above its occupancy")
				}
			}
			mustMkdir(t, g)
		})
	}
	t.Run("worker", func(t *testing.T) {
		t.Parallel()
		sim := resctrlsim.MountT(t, resctrlsim.Options{NumRMIDs: 2, Limbo: true})
		g := filepath.Join(sim.Dir, "mon_groups/g")
		mustMkdir(t, g)
		sim.SetOccupancy("mon_groups/g", 2*resctrlsim.MaxThresholdOccupancy)
		if err := syscall.Rmdir(g); err != nil {
			t.Fatal(err)
		}
		passes := sim.Status().Stats.LimboPasses
		eventually(t, "two passes of the worker", func() bool { return sim.Status().Stats.LimboPasses >= passes+2 })
		wantErrno(t, "mkdir while the lines are still counted", os.Mkdir(g, 0o755), syscall.EBUSY)
		sim.ClearOccupancy("mon_groups/g")
		eventually(t, "the worker to free the RMID", func() bool { return os.Mkdir(g, 0o755) == nil })
	})
}

// ENOSPC, not EBUSY, when limbo is empty too; a group's mkdir (a control group's too) takes
// the RMID a pass freed.
func TestLimboENOSPCWhenLimboIsEmpty(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{NumRMIDs: 2, Limbo: true, LimboInterval: 1 << 62})
	mustMkdir(t, filepath.Join(sim.Dir, "mon_groups/a"))
	wantErrno(t, "mkdir with every RMID used", os.Mkdir(filepath.Join(sim.Dir, "mon_groups/b"), 0o755), syscall.ENOSPC)
	if err := syscall.Rmdir(filepath.Join(sim.Dir, "mon_groups/a")); err != nil {
		t.Fatal(err)
	}
	wantErrno(t, "a control group's mkdir with its RMID in limbo", os.Mkdir(filepath.Join(sim.Dir, "c"), 0o755), syscall.EBUSY)
	sim.LimboPass()
	mustMkdir(t, filepath.Join(sim.Dir, "c"))
}

// max_threshold_occupancy as max_threshold_occupancy_write takes it: kstrtouint (base 0, one
// trailing newline), at most the cache's size, rounded down to the counter's granularity.
func TestThresholdWrites(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	f := filepath.Join(sim.Dir, "info/L3_MON/max_threshold_occupancy")
	for _, tc := range []struct {
		write string
		errno syscall.Errno
		read  string
	}{
		{"2097152\n", 0, "2097152\n"},
		{"100000", 0, "65536\n"}, // rounded down to 64 KiB
		{"0x200000\n", 0, "2097152\n"},
		{"0", 0, "0\n"},
		{"33554433\n", syscall.EINVAL, "0\n"}, // over the 32 MiB cache
		{"1_000\n", syscall.EINVAL, "0\n"},
		{"-1\n", syscall.EINVAL, "0\n"},
		{"lots\n", syscall.EINVAL, "0\n"},
		{"99999999999\n", syscall.ERANGE, "0\n"},
	} {
		err := write(f, tc.write)
		if tc.errno == 0 && err != nil || tc.errno != 0 && !errors.Is(err, tc.errno) {
			t.Errorf("write %q: %v, want %v", tc.write, err, tc.errno)
		}
		if got := read(t, f); got != tc.read {
			t.Errorf("after writing %q: %q, want %q", tc.write, got, tc.read)
		}
	}
}
