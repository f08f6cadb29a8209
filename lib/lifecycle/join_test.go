package lifecycle

import (
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
)

// countingResctrl counts how threads reach the groups: goresctrl's class-checked Assign
// (which lists the resctrl root on every call) or a pass through one open tasks file.
type countingResctrl struct {
	*resctrlfake.Resctrl
	mu      sync.Mutex
	assigns int
	writes  [][]int // the ids of each WriteTasks call
}

func (c *countingResctrl) Assign(g resctrlfs.Addr, tid int) error {
	c.mu.Lock()
	c.assigns++
	c.mu.Unlock()
	return c.Resctrl.Assign(g, tid)
}

func (c *countingResctrl) WriteTasks(g resctrlfs.Addr, ids []int, result func(int, error) error) error {
	c.mu.Lock()
	c.writes = append(c.writes, slices.Clone(ids))
	c.mu.Unlock()
	return c.Resctrl.WriteTasks(g, ids, result)
}

func (c *countingResctrl) reset() (assigns int, writes [][]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	assigns, writes = c.assigns, c.writes
	c.assigns, c.writes = 0, nil
	return assigns, writes
}

// A container, the pod's first or one joining its group, has every thread of its init written
// through one open tasks file, the leader first: no class check that lists the resctrl root
// and reads every class's tasks (a FUSE round trip per entry on the simulator, a walk of
// every thread of the node per class on a real one). The kernel refuses a thread of another
// class itself; goresctrl's check only names the class, once the leader was refused
// (TestFakePlaceClassed).
func TestDecideJoinWritesTasksOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, bareFake(8))
	fake := e.fake
	rs := &countingResctrl{Resctrl: fake}
	m, err := NewWith(e.cfg, e.m.log, rs)
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	pid := os.Getpid() // a Go process: several threads
	if out, err := e.create("c1", pid, fakeCrio(podA)); err != nil || out.Action != vocab.Created {
		t.Fatalf("c1: %+v, %v", out, err)
	}
	if assigns, writes := rs.reset(); assigns != 0 || len(writes) != 1 || writes[0][0] != pid {
		t.Errorf("the pod's first container: %d class-checked assigns and tasks-file passes %v, want 0 and one, the leader %d first", assigns, writes, pid)
	}
	out, err := e.create("c2", pid, fakeCrio(podA))
	if err != nil || out.Action != vocab.Joined {
		t.Fatalf("c2: %+v, %v", out, err)
	}
	assigns, writes := rs.reset()
	if assigns != 0 || len(writes) != 1 {
		t.Fatalf("a joining container: %d class-checked assigns and %d tasks-file passes %v, want 0 and 1", assigns, len(writes), writes)
	}
	tids, _ := procfs.Threads(pid)
	if w := writes[0]; len(w) == 0 || w[0] != pid || len(w) < len(tids)-2 || out.Threads != len(w) {
		t.Errorf("the pass wrote %v (%d moved), want the leader %d first and every thread of %v", w, out.Threads, pid, tids)
	}
}

// A joining container whose init is not in its pod group's class is refused, as the pod's
// first container would be: the pod's record proves the group's class, and the kernel
// refuses (EINVAL) a task of another class in a monitoring group, whatever checks we skip.
func TestJoinRefusedOutsideTheClass(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		for name, c := range map[string]struct {
			class  string // the pod's group's class, and the joiner's spec
			initIn string // where the joiner's init really is ("" the root)
		}{
			"group in the root, init in a class": {class: "", initIn: "gold"},
			"group in a class, init in the root": {class: "gold", initIn: ""},
			"group in a class, init in another":  {class: "gold", initIn: "silver"},
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				for _, cl := range []string{"gold", "silver"} {
					e.mkClass(cl)
				}
				first, joiner := e.proc(), e.proc()
				e.intoClass(c.class, first)
				e.intoClass(c.initIn, joiner)
				group := GroupPath(c.class, podA)
				if out, err := e.place("c1", first, crio(podA, sbA), c.class); err != nil || out.Action != vocab.Created {
					t.Fatalf("the pod's first container: %+v, %v", out, err)
				}
				out, err := e.place("c2", joiner, crio(podA, sbA), c.class)
				if !errors.Is(err, resctrlfs.ErrClassMismatch) {
					t.Errorf("a joiner outside its group's class: %+v, %v, want %v", out, err, resctrlfs.ErrClassMismatch)
				}
				if got := e.tasks(group); slices.Contains(got, joiner) || !slices.Contains(got, first) {
					t.Errorf("the group holds %v: want the first init %d and not the joiner %d", got, first, joiner)
				}
				if c.initIn != "" && !slices.Contains(e.tasks(c.initIn), joiner) {
					t.Errorf("the joiner left its class %s", c.initIn)
				}
				rec, _, _ := e.m.Store().Load(podA)
				if _, in := rec.Containers["c2"]; in || len(rec.Containers) != 1 {
					t.Errorf("the record keeps %v, want only c1", rec.Containers)
				}
			})
		}
	})
}

// runc puts only its init's leader in the container's class: joining a classed pod's group,
// the leader is placed and the other threads, which the kernel refuses for the class's group
// and which end at execve, are skipped, as for the pod's first container, through the one
// pass over the tasks file.
func TestJoinClassedMultiThreadedInit(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t)
		e.mkClass("gold")
		into := func(pid int) { e.intoClass("gold", pid) }
		first := e.proc()
		into(first)
		if out, err := e.place("c1", first, crio(podA, sbA), "gold"); err != nil || out.Action != vocab.Created {
			t.Fatalf("the pod's first container: %+v, %v", out, err)
		}
		p := threadedInit(t)
		into(p)
		out, err := e.place("c2", p, crio(podA, sbA), "gold")
		if err != nil || out.Action != vocab.Joined || out.Threads < 1 || !strings.Contains(out.Detail, "outside class gold") {
			t.Fatalf("a multi-threaded init joining the classed group: %+v, %v", out, err)
		}
		if got := e.tasks("gold/mon_groups/" + podA); !slices.Contains(got, p) || !slices.Contains(got, first) {
			t.Errorf("the class's group holds %v, want the joiner's leader %d and the first init %d", got, p, first)
		}
	})
}
