package resctrlsim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// io_alloc (ctrlmondata.c resctrl_io_alloc_write) reserves the highest CLOSID: enabled, one
// class fewer can be made (mkdir: ENOSPC, "Out of CLOSIDs"); enabling while a class holds
// it fails with ENOSPC naming the class; disabling gives it back; garbage is EINVAL with
// last_cmd_status untouched, and a re-mount keeps it reserved. Swept over num_closids.
func TestIOAllocReservesHighestCLOSID(t *testing.T) {
	t.Parallel()
	for _, closids := range []int{2, 4, 16} {
		t.Run(fmt.Sprint("closids=", closids), func(t *testing.T) {
			t.Parallel()
			sim := resctrlsim.MountT(t, resctrlsim.Options{NumCLOSIDs: closids, IOAlloc: true, Debug: true})
			d := sim.Dir
			file := filepath.Join(d, "info/L3/io_alloc")
			if got := read(t, file); got != "disabled\n" {
				t.Fatalf("io_alloc at mount: %q", got)
			}
			last := fmt.Sprint(closids - 1)
			// Every class but the root's CLOSID 0: the last one made holds the highest.
			for i := 1; i < closids; i++ {
				mustMkdir(t, filepath.Join(d, fmt.Sprint("c", i)))
			}
			holder := ""
			for i := 1; i < closids; i++ {
				if strings.TrimSpace(read(t, filepath.Join(d, fmt.Sprint("c", i), "ctrl_hw_id"))) == last {
					holder = fmt.Sprint("c", i)
				}
			}
			wantErrno(t, "enable while a class holds the CLOSID", write(file, "1\n"), syscall.ENOSPC)
			if got, want := read(t, filepath.Join(d, "info/last_cmd_status")), "CLOSID (ctrl_hw_id) "+last+" for io_alloc is used by "+holder+" group\n"; got != want {
				t.Errorf("last_cmd_status %q, want %q", got, want)
			}
			if err := syscall.Rmdir(filepath.Join(d, holder)); err != nil {
				t.Fatal(err)
			}
			if err := write(file, "1\n"); err != nil {
				t.Fatalf("enable with the CLOSID free: %v", err)
			}
			if got := read(t, file); got != "enabled\n" {
				t.Errorf("io_alloc %q after enabling", got)
			}
			wantErrno(t, "mkdir of a class with only io_alloc's CLOSID left", os.Mkdir(filepath.Join(d, "again"), 0o755), syscall.ENOSPC)
			if got := read(t, filepath.Join(d, "info/last_cmd_status")); got != "Out of CLOSIDs\n" {
				t.Errorf("last_cmd_status %q", got)
			}
			wantErrno(t, "garbage", write(file, "maybe\n"), syscall.EINVAL)
			if got := read(t, filepath.Join(d, "info/last_cmd_status")); got != "Out of CLOSIDs\n" {
				t.Errorf("a write kstrtobool refuses changed last_cmd_status to %q", got)
			}
			// A re-mount: the classes go, the reservation stays.
			sim.Reset()
			for i := 1; i < closids-1; i++ {
				mustMkdir(t, filepath.Join(d, fmt.Sprint("r", i)))
			}
			wantErrno(t, "mkdir past the reservation after a re-mount", os.Mkdir(filepath.Join(d, "over"), 0o755), syscall.ENOSPC)
			if err := write(file, "0\n"); err != nil {
				t.Fatalf("disable: %v", err)
			}
			mustMkdir(t, filepath.Join(d, "over"))
			if got := strings.TrimSpace(read(t, filepath.Join(d, "over/ctrl_hw_id"))); got != last {
				t.Errorf("the class made after disabling holds CLOSID %s, want the freed %s", got, last)
			}
		})
	}
}
