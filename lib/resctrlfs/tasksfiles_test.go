package resctrlfs_test

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/intel/goresctrl/pkg/monitor"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// The tasks file kept open for a group never writes into the wrong one: a group removed
// and made again under the same name by someone else gets the next write, one removed for
// good fails it, and one removed through kernel.Groups is written to afresh.
func TestTasksFileOfAGroupMadeAgain(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	k, err := kernel.Open(sim.Dir, resctrlfs.CheckSimulator, monitor.PodUIDValidator, monitor.CanonicalizePodUID, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	g := resctrlfs.Addr{Name: uid}
	dir := filepath.Join(sim.Dir, g.Path())
	pids := []int{proctest.Start(t, proctest.Sleep), proctest.Start(t, proctest.Sleep), proctest.Start(t, proctest.Sleep), proctest.Start(t, proctest.Sleep)}
	write := func(pid int) error {
		return k.WriteTasks(g, []int{pid}, func(_ int, err error) error { return err })
	}
	in := func(pid int) bool { tids, _ := k.Tasks(g); return tids[pid] }

	if err := k.Ensure(g); err != nil {
		t.Fatal(err)
	}
	if err := write(pids[0]); err != nil || !in(pids[0]) {
		t.Fatalf("first write: %v, in the group: %v", err, in(pids[0]))
	}
	// Another process removes the group (rmdir(2): its tasks go to the parent) and makes it
	// again (a reconcile, a hook).
	if err := syscall.Rmdir(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := write(pids[1]); err != nil || !in(pids[1]) {
		t.Errorf("after the group was made again: %v, in the new group: %v", err, in(pids[1]))
	}
	// Removed for good: the write fails, it does not vanish.
	if err := syscall.Rmdir(dir); err != nil {
		t.Fatal(err)
	}
	if err := write(pids[2]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a write to a group that is gone: %v, want ENOENT", err)
	}
	// Through kernel.Groups: made, removed, made again.
	if err := k.Ensure(g); err != nil {
		t.Fatal(err)
	}
	if err := k.Remove(g); err != nil {
		t.Fatal(err)
	}
	if err := k.Ensure(g); err != nil {
		t.Fatal(err)
	}
	if err := write(pids[3]); err != nil || !in(pids[3]) {
		t.Errorf("after Remove and Ensure: %v, in the group: %v", err, in(pids[3]))
	}
}

// Writers of one group and of others run while its group is removed and made again: every
// write goes to a group of that name or fails, none is lost without an error (run under
// -race in make test).
func TestTasksFilesConcurrent(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{NumRMIDs: 16})
	k, err := kernel.Open(sim.Dir, resctrlfs.CheckSimulator, monitor.PodUIDValidator, monitor.CanonicalizePodUID, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	pid := proctest.Start(t, proctest.Sleep)
	names := []string{uid, "0f8b2c1e-1111-2222-3333-444455556667", "0f8b2c1e-1111-2222-3333-444455556668"}
	for _, n := range names {
		if err := k.Ensure(resctrlfs.Addr{Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				n := names[(w+i)%len(names)]
				err := k.WriteTasks(resctrlfs.Addr{Name: n}, []int{pid}, func(_ int, err error) error { return err })
				if err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Errorf("write to %s: %v", n, err)
					return
				}
			}
		}()
	}
	for range 10 {
		if err := k.Remove(resctrlfs.Addr{Name: names[0]}); err != nil {
			t.Error(err)
		}
		if err := k.Ensure(resctrlfs.Addr{Name: names[0]}); err != nil {
			t.Error(err)
		}
	}
	wg.Wait()
}
