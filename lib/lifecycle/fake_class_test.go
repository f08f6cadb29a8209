package lifecycle

import (
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
)

// Place through the fake, for each place the container's init can really be against the
// class its spec names (which decides the group's path): placed only where the kernel
// would take it, refused with the reason otherwise, and no group left behind for a refused
// container. The init is this test process, a Go program with several threads; like runc,
// the "runtime" puts only its leader in the class, and the other threads are skipped.
func TestFakePlaceClassed(t *testing.T) {
	t.Parallel()
	pid := os.Getpid()
	for name, c := range map[string]struct {
		class  string // the spec's class: the group's
		initIn string // where the runtime put the init's leader
		want   string // "" placed; else words of the refusal
	}{
		"in its class":                       {class: "gold", initIn: "gold"},
		"in the root, no class":              {},
		"spec names a class, init in root":   {class: "gold", want: "did the runtime apply linux.intelRdt?"},
		"spec names a class, init in other":  {class: "gold", initIn: "silver", want: "pid belongs to a different control group"},
		"spec names no class, init in class": {initIn: "gold", want: "pid belongs to a different control group"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, bareFake(8))
			fake := e.fake
			fake.JoinClass(pid, c.initIn)
			group := GroupPath(c.class, podA)
			out, err := e.place("c1", pid, crio(podA, sbA), c.class)
			if c.want != "" {
				if !errors.Is(err, resctrlfs.ErrClassMismatch) || !strings.Contains(err.Error(), c.want) {
					t.Errorf("placed %+v, %v; want %v saying %q", out, err, resctrlfs.ErrClassMismatch, c.want)
				}
				if fake.Exists(resctrlfake.At(group)) || fake.Count() != 0 {
					t.Errorf("a group was left for the refused container")
				}
				return
			}
			if err != nil || out.Action != vocab.Created || out.Group != group {
				t.Fatalf("placed %+v, %v; want created in %s", out, err, group)
			}
			tasks, _ := fake.Tasks(resctrlfake.At(group))
			if !tasks[pid] {
				t.Errorf("%s holds %v, not the init's leader %d", group, tasks, pid)
			}
			if c.class != "" && (len(tasks) != 1 || !strings.Contains(out.Detail, "outside class "+c.class)) {
				t.Errorf("in a class, only the leader moves (the rest end at execve): %v, detail %q", tasks, out.Detail)
			}
		})
	}
}

// A container joining its pod's group in a class goes through one pass over the tasks file
// (goresctrl's check only after a refusal): the kernel's refusal of a joiner outside the class is a class
// mismatch, and the group keeps only the first container's task.
func TestFakeJoinClassed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, bareFake(8))
	fake := e.fake
	first, joiner := e.proc(), os.Getpid()
	fake.JoinClass(first, "gold")
	if out, err := e.place("c1", first, crio(podA, sbA), "gold"); err != nil || out.Action != vocab.Created {
		t.Fatalf("the pod's first container: %+v, %v", out, err)
	}
	_, err := e.place("c2", joiner, crio(podA, sbA), "gold")
	if !errors.Is(err, resctrlfs.ErrClassMismatch) {
		t.Errorf("a joiner left in the root: %v, want %v", err, resctrlfs.ErrClassMismatch)
	}
	if tasks, _ := fake.Tasks(resctrlfs.Addr{Class: "gold", Name: podA}); !tasks[first] || tasks[joiner] {
		t.Errorf("the group holds %v: want %d and not %d", tasks, first, joiner)
	}
	fake.JoinClass(joiner, "gold")
	if out, err := e.place("c2", joiner, crio(podA, sbA), "gold"); err != nil || out.Action != vocab.Joined {
		t.Errorf("the joiner in the class: %+v, %v", out, err)
	}
	if tasks, _ := fake.Tasks(resctrlfs.Addr{Class: "gold", Name: podA}); !tasks[joiner] {
		t.Errorf("the group holds %v, want the joiner's leader %d", tasks, joiner)
	}
	rec, _, _ := e.m.Store().Load(podA)
	if ids := slices.Sorted(maps.Keys(rec.Containers)); !slices.Equal(ids, []string{"c1", "c2"}) {
		t.Errorf("the record holds %v", ids)
	}
}
