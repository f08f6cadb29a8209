package resctrlfake

import (
	"errors"
	"syscall"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// The fake refuses what the kernel refuses between classes (the simulator's
// TestControlGroupBoundary, same steps): a root task into a class's monitoring group, a task
// of a class into the root's; and goresctrl's check refuses a task of another class first.
func TestFakeClassBoundary(t *testing.T) {
	t.Parallel()
	f := New(8)
	const tid = 4242
	m, r := resctrlfs.Addr{Class: "c", Name: "m"}, resctrlfs.Addr{Name: "r"}
	if err := f.Ensure(m); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteTasks(m, []int{tid}, func(_ int, err error) error { return err }); !errors.Is(err, syscall.EINVAL) ||
		f.LastCmdStatus() != "Can't move task to different control group" {
		t.Errorf("a root task into c's mon group: %v (%q), want EINVAL", err, f.LastCmdStatus())
	}
	f.JoinClass(tid, "c")
	if err := f.Assign(m, tid); err != nil {
		t.Fatalf("a task of c into c's mon group: %v", err)
	}
	if tasks, _ := f.Tasks(m); !tasks[tid] {
		t.Errorf("c/mon_groups/m holds %v, want %d", tasks, tid)
	}
	if err := f.Ensure(r); err != nil {
		t.Fatal(err)
	}
	if err := f.Assign(r, tid); !errors.Is(err, resctrlfs.ErrClassMismatch) {
		t.Errorf("a task of c into the root's mon group through goresctrl: %v, want its class mismatch", err)
	}
	if err := f.WriteTasks(r, []int{tid}, func(_ int, err error) error { return err }); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("a task of c into the root's mon group: %v, want EINVAL", err)
	}
	if tasks, _ := f.Tasks(m); !tasks[tid] {
		t.Errorf("a refused move took the task out of its group: %v", tasks)
	}
}
