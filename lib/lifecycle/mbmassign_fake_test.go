package lifecycle

import (
	"bytes"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
)

// The counter policy's decisions on the fake: the scenarios of TestCounterPolicy and
// TestCounterPolicyFaults (mbmassign_test.go, which stay as the end-to-end check of the file
// operations on the simulator), without root or FUSE.

// fakeAssignEnv is assignEnv on the fake: mbm_event mode, two domains of 8 counters (the
// root group holding 2 of each), 9 pods of which 3, 4 and 5 ask for counters by annotation;
// the fake gave pods 0, 1 and 2 theirs at mkdir. Every group's LLC occupancy is the l3
// tree's, the same for all, so the ranking falls to who asked, who holds and the name.
type fakeAssignEnv struct {
	*env
	fake *resctrlfake.Resctrl
	pods []string
	log  *bytes.Buffer
}

func newFakeAssignEnv(t *testing.T) *fakeAssignEnv {
	e, fake := newFakeEnv(t, 63, func(c *config.Config) {
		c.MBMAssignment = config.MBMAssignPolicy
		c.MBMAssignmentHold = config.Duration(5 * time.Minute)
		c.Retention = config.Duration(time.Hour)
	})
	fake.SetAssignMode(resctrlfs.AssignModeEvent, 2, 8)
	fake.UseTree(resctrlfake.Tree(t, "l3"))
	fake.ForgetTasks() // the containers' init is this test process
	a := &fakeAssignEnv{env: e, fake: fake, log: &bytes.Buffer{}}
	e.m.log = slog.New(slog.NewTextHandler(a.log, nil))
	for i := range 9 {
		pod := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
		if out, err := e.create(fmt.Sprintf("c%d", i), os.Getpid(), a.annotations(i)); err != nil || out.Action != vocab.Created {
			t.Fatalf("pod %d: %+v, %v", i, out, err)
		}
		a.pods = append(a.pods, pod)
	}
	return a
}

func (a *fakeAssignEnv) annotations(i int) map[string]string {
	ann := crio(fmt.Sprintf("%08d-0000-4000-8000-000000000000", i), strings.Repeat(fmt.Sprint(i), 64))
	if i >= 3 && i <= 5 {
		ann[a.cfg.MBMAssignmentAnnotation] = "true"
	}
	return ann
}

// holders are the pods holding both counters in both domains; a pod holding some but not all
// fails the test (the policy never leaves one half-counted).
func (a *fakeAssignEnv) holders() []int {
	a.t.Helper()
	var out []int
	for i, pod := range a.pods {
		ga, err := a.fake.GroupAssignment("mon_groups/" + pod)
		if err != nil {
			a.t.Fatal(err)
		}
		n := 0
		for _, evs := range ga.Assigned {
			n += len(evs)
		}
		switch n {
		case 0:
		case 4:
			out = append(out, i)
		default:
			a.t.Fatalf("pod %d holds %v: half-counted", i, ga.Assigned)
		}
	}
	return out
}

func (a *fakeAssignEnv) sweep() {
	a.t.Helper()
	if _, err := a.m.Sweep(); err != nil {
		a.t.Fatalf("sweep: %v", err)
	}
}

// end stops pod i's container (its only one): the pod goes idle, its group kept.
func (a *fakeAssignEnv) end(i int, container string) {
	a.t.Helper()
	if o := a.stop(container, a.annotations(i)); o.Action != vocab.Idle {
		a.t.Fatalf("stop pod %d: %+v", i, o)
	}
}

func (a *fakeAssignEnv) since() map[string]map[string]time.Time {
	a.t.Helper()
	out := map[string]map[string]time.Time{}
	for _, pod := range a.pods {
		r, _, err := a.m.Store().Load(pod)
		if err != nil {
			a.t.Fatal(err)
		}
		out[pod] = r.MBMSince
	}
	return out
}

// The pods that ask get the counters once the kernel's mkdir-time holders are past the hold;
// then nothing moves over many sweeps; a pod that ends hands its counters on at once.
func TestFakeCounterPolicy(t *testing.T) {
	t.Parallel()
	a := newFakeAssignEnv(t)
	if got := a.holders(); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("after mkdir: pods %v hold counters, want the first three", got)
	}
	a.sweep()
	if got := a.holders(); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("within the hold time: pods %v hold counters, want the kernel's 0, 1, 2 kept", got)
	}
	a.now = a.now.Add(6 * time.Minute)
	a.sweep()
	if got := a.holders(); !slices.Equal(got, []int{3, 4, 5}) {
		t.Fatalf("past the hold time: pods %v hold counters, want those that asked (3, 4, 5)", got)
	}
	before := a.since()
	for _, i := range []int{3, 4, 5} {
		if len(before[a.pods[i]]) != 2 {
			t.Errorf("pod %d's record says it got counters in %v, want both domains", i, before[a.pods[i]])
		}
	}
	a.log.Reset()
	for range 50 {
		a.now = a.now.Add(time.Minute)
		a.sweep()
	}
	if got := a.holders(); !slices.Equal(got, []int{3, 4, 5}) {
		t.Errorf("after 50 sweeps: pods %v hold counters, want 3, 4, 5", got)
	}
	if after := a.since(); !maps.EqualFunc(before, after, func(x, y map[string]time.Time) bool { return maps.EqualFunc(x, y, time.Time.Equal) }) {
		t.Errorf("50 sweeps with nothing changed reassigned counters: %v, then %v", before, after)
	}
	if strings.Contains(a.log.String(), "counter assignment") {
		t.Errorf("50 sweeps with nothing changed wrote:\n%s", a.log)
	}
	a.end(4, "c4")
	a.sweep()
	got := a.holders()
	if len(got) != 3 || slices.Contains(got, 4) || !slices.Contains(got, 3) || !slices.Contains(got, 5) {
		t.Errorf("pod 4 ended: pods %v hold counters, want 3, 5 and one other", got)
	}
}

// A write the kernel refuses is logged with its reason and lost nothing: the next sweep
// makes it. A sweep after the mode was switched away writes nothing; switched back, the
// policy puts the counters where it wants them.
func TestFakeCounterPolicyFaults(t *testing.T) {
	t.Parallel()
	a := newFakeAssignEnv(t)
	a.now = a.now.Add(6 * time.Minute)
	a.sweep()
	a.end(3, "c3")
	for n := 1; n <= 4; n++ { // the first n writes of the handover fail
		a.log.Reset()
		a.fake.FailNext(resctrlfake.OpAssignWrite, n, syscall.ENOSPC)
		a.sweep()
		if !strings.Contains(a.log.String(), "the kernel refused a write") || !strings.Contains(a.log.String(), "fake fault in assign-write") {
			t.Errorf("%d refused writes: the log says\n%s", n, a.log)
		}
		a.fake.ClearFaults()
		a.sweep()
		got := a.holders()
		if len(got) != 3 || slices.Contains(got, 3) || !slices.Contains(got, 4) || !slices.Contains(got, 5) {
			t.Fatalf("%d refused writes, then a sweep: pods %v hold counters, want 4, 5 and one other", n, got)
		}
		// Pod 3 again, to hand on once more.
		c3 := fmt.Sprintf("c3-%d", n)
		if out, err := a.create(c3, os.Getpid(), a.annotations(3)); err != nil || out.Action != vocab.Joined {
			t.Fatalf("pod 3 back: %+v, %v", out, err)
		}
		a.now = a.now.Add(6 * time.Minute)
		a.sweep()
		if got := a.holders(); !slices.Equal(got, []int{3, 4, 5}) {
			t.Fatalf("pod 3 back: pods %v hold counters, want 3, 4, 5", got)
		}
		a.end(3, c3)
	}

	a.fake.SwitchMode("default")
	a.log.Reset()
	a.sweep()
	if strings.Contains(a.log.String(), "counter assignment") {
		t.Errorf("a sweep in default mode wrote:\n%s", a.log)
	}
	a.fake.SwitchMode(resctrlfs.AssignModeEvent)
	a.sweep()
	// The switch took the root group's counters too: the policy hands them all out.
	as, err := a.fake.Assignment()
	if err != nil {
		t.Fatal(err)
	}
	if got := a.holders(); len(got) < 3 || slices.Contains(got, 3) || !slices.Contains(got, 4) || !slices.Contains(got, 5) ||
		as.Available["0"] >= 2 || as.Available["1"] >= 2 {
		t.Errorf("mode back to mbm_event: pods %v hold counters and %v are free, want 4, 5 and others, none left free", got, as.Available)
	}
}
