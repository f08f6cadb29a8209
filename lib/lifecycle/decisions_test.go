package lifecycle

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
)

// The decisions below run on the in-memory resctrl: no root, no FUSE. The simulator tests
// in lifecycle_test.go cover the same paths through real file operations.

func TestDecidePodLifetimeAndRetention(t *testing.T) {
	t.Parallel()
	e := newEnv(t, bareFake(8), withConfig(func(c *config.Config) { c.Retention = config.Duration(time.Minute) }))
	fake := e.fake
	fake.ForgetTasks()
	pid := os.Getpid()
	for id, want := range map[string]vocab.Action{"c1": vocab.Created} {
		if out, err := e.create(id, pid, fakeCrio(podA)); err != nil || out.Action != want {
			t.Fatalf("%s: %+v, %v", id, out, err)
		}
	}
	if out, err := e.create("c2", pid, fakeCrio(podA)); err != nil || out.Action != vocab.Joined {
		t.Fatalf("c2: %+v, %v", out, err)
	}
	if o := e.stop("c1", fakeCrio(podA)); o.Action != vocab.Left {
		t.Errorf("first stop: %+v", o)
	}
	if o := e.stop("c2", fakeCrio(podA)); o.Action != vocab.Idle {
		t.Errorf("last stop: %+v", o)
	}
	e.now = e.now.Add(30 * time.Second)
	if removed, err := e.m.Sweep(); err != nil || len(removed) != 0 || fake.Count() != 1 {
		t.Errorf("sweep inside the window: %v, %v", removed, err)
	}
	e.now = e.now.Add(time.Minute)
	if removed, err := e.m.Sweep(); err != nil || len(removed) != 1 || fake.Count() != 0 {
		t.Errorf("sweep after the window: %v, %v", removed, err)
	}
}

// A pod that got no RMID at its first container is completed whole when a later container
// gets one: every recorded container's tasks move in, and the pod says it is late.
func TestDecidePendingPodCompletedWhole(t *testing.T) {
	t.Parallel()
	e := newEnv(t, bareFake(1), withConfig(func(c *config.Config) { c.Retention = 0 }))
	fake := e.fake
	pa, p1 := e.proc(), e.proc()
	if _, err := e.create("a1", pa, fakeCrio(podA)); err != nil {
		t.Fatal(err)
	}
	if out, err := e.create("b1", p1, fakeCrio(podB)); !errors.Is(err, resctrlfs.ErrNoRMID) || out.Action != vocab.Pending {
		t.Fatalf("b1: %+v, %v", out, err)
	}
	crash(t, pa)
	e.stop("a1", fakeCrio(podA)) // frees the RMID (retention 0)
	if out, err := e.create("b2", e.proc(), fakeCrio(podB)); err != nil || out.Action != vocab.Created {
		t.Fatalf("b2: %+v, %v", out, err)
	}
	tasks, _ := fake.Tasks(resctrlfs.Addr{Name: podB})
	rec, _, _ := e.m.Store().Load(podB)
	if !tasks[p1] || !rec.LateAssigned || rec.Pending != "" {
		t.Errorf("the pending pod's first container in the group: %v; late-assigned %v; pending %q", tasks[p1], rec.LateAssigned, rec.Pending)
	}
}

// A pod's sandbox is never placed and never gets a group; its end ends the pod at once,
// unless the group is bound to a newer sandbox of the same pod.
func TestDecideSandbox(t *testing.T) {
	t.Parallel()
	e := newEnv(t, bareFake(8))
	fake := e.fake
	fake.ForgetTasks()
	sb := crio(podA, sbA)
	sb[identity.CRIOContainerType] = "sandbox"
	if out, err := e.create(sbA, os.Getpid(), sb); err != nil || out.Action != vocab.Skipped || fake.Count() != 0 {
		t.Fatalf("sandbox placed: %+v, %v", out, err)
	}
	if _, err := e.create("app", os.Getpid(), crio(podA, sbA)); err != nil {
		t.Fatal(err)
	}
	if out, err := e.m.EndPod(PodEnd{PodUID: podA, SandboxID: sbB}); err != nil || out.Action != vocab.Kept || fake.Count() != 1 {
		t.Errorf("the end of another sandbox of the pod: %+v, %v", out, err)
	}
	if out := e.stop(sbA, sb); out.Action != vocab.Removed || fake.Count() != 0 {
		t.Errorf("sandbox's departure: %+v", out)
	}
}

func TestDecideRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, bareFake(8))
	if _, err := e.create("c1", os.Getpid(), crio(podA, sbA)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.create("c2", os.Getpid(), crio(podA, sbB)); !errors.Is(err, ErrSpoofed) {
		t.Errorf("a container claiming the pod with another live sandbox: %v", err)
	}
	if _, err := e.place("c3", os.Getpid(), crio(podA, sbA), "gold"); !errors.Is(err, resctrlfs.ErrClassMismatch) {
		t.Errorf("a container of the pod in another class: %v", err)
	}
	fails, _ := e.m.Store().Failures(time.Time{})
	if len(fails) != 1 || fails[0].Subject != "c2" || fails[0].Pod != podA {
		t.Errorf("failures are keyed by container, with the pod: %+v", fails)
	}
}

// However many pods come and go, the state dir keeps a bounded number of files.
func TestStateStaysBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, bareFake(64), withConfig(func(c *config.Config) { c.Retention = config.Duration(time.Second) }))
	fake := e.fake
	fake.ForgetTasks()
	for i := range 3000 {
		id := "c" + uid(i)[24:]
		if _, err := e.create(id, os.Getpid(), fakeCrio(uid(i))); err != nil {
			t.Fatal(err)
		}
		e.stop(id, fakeCrio(uid(i)))
		e.now = e.now.Add(500 * time.Millisecond)
		if i%10 == 0 {
			if _, err := e.m.Sweep(); err != nil {
				t.Fatal(err)
			}
		}
	}
	n := 0
	_ = filepath.Walk(e.cfg.StateDir, func(string, os.FileInfo, error) error { n++; return nil })
	if n > 40 {
		t.Errorf("state dir holds %d files after 3000 pods came and went", n)
	}
}

// A departure that finds no group of ours is skipped, and the outcome says whose container
// it was and why: CRI-O's poststop at rmp, after reconcile removed the group of a pod whose
// containers died while CRI-O was down; a container that was never monitored.
func TestDecideDepartureWithoutGroup(t *testing.T) {
	t.Parallel()
	optedOut := fakeCrio(podA)
	optedOut["resctrl-mon.io/disable"] = "true"
	for _, c := range []struct {
		name   string
		ann    map[string]string
		before func(e *env, fake *resctrlfake.Resctrl)
		detail string
	}{
		{"group removed by reconcile", fakeCrio(podA), func(e *env, fake *resctrlfake.Resctrl) {
			pid := e.proc()
			if _, err := e.create("c1", pid, fakeCrio(podA)); err != nil {
				t.Fatal(err)
			}
			crash(t, pid)
			if steps, err := e.m.Reconcile(nil, ReconcileOptions{}); err != nil || fake.Count() != 0 {
				t.Fatalf("reconcile of a dead pod (retention 0): %+v, %v", steps, err)
			}
		}, "no group of ours"},
		{"opted out", optedOut, func(e *env, _ *resctrlfake.Resctrl) {
			if out, err := e.create("c1", os.Getpid(), optedOut); err != nil || out.Action != vocab.Skipped {
				t.Fatalf("an opted-out container: %+v, %v", out, err)
			}
		}, "not monitored: opted out by resctrl-mon.io/disable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, bareFake(8), withConfig(func(c *config.Config) { c.Retention = 0 }))
			fake := e.fake
			fake.ForgetTasks()
			c.before(e, fake)
			out := e.stop("c1", c.ann)
			if out.Action != vocab.Skipped || out.Pod != podA || !strings.Contains(out.Detail, c.detail) {
				t.Errorf("departure: %+v, want skipped, pod %s, detail with %q", out, podA, c.detail)
			}
		})
	}
}
