package lifecycle

import (
	"bytes"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/mbmpolicy"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// assignEnv is a node in mbm_event mode with 9 pods and counters for 3 in each of two
// domains (8 a domain, the root group holding 2), under the policy; pods 3, 4 and 5 ask for
// counters by annotation. The kernel gave pods 0, 1 and 2 theirs at mkdir. On the fake every
// group's LLC occupancy is the l3 tree's, the same for all, so the ranking falls to who
// asked, who holds and the name.
type assignEnv struct {
	*env
	pods []string
	log  *bytes.Buffer
}

func newAssignEnv(t *testing.T, newEnv newEnvFunc) *assignEnv {
	return newAssignEnvOn(t, newEnv, resctrlsim.Options{MBMAssign: resctrlsim.MBMAssignEvent, MBMCounters: 8, L3Domains: 2})
}

// newAssignEnvOn is newAssignEnv on a kernel of the given options (8 counters a domain).
func newAssignEnvOn(t *testing.T, newEnv newEnvFunc, o resctrlsim.Options) *assignEnv {
	e := newEnv(t, simOpts(o), withConfig(func(c *config.Config) {
		c.MBMAssignment = config.MBMAssignPolicy
		c.MBMAssignmentHold = config.Duration(5 * time.Minute)
		c.Retention = config.Duration(time.Hour)
	}))
	a := &assignEnv{env: e, log: &bytes.Buffer{}}
	e.m.log = slog.New(slog.NewTextHandler(a.log, nil))
	for i := range 9 {
		if out, err := e.create(fmt.Sprintf("c%d", i), e.proc(), a.annotations(i)); err != nil || out.Action != vocab.Created {
			t.Fatalf("pod %d: %+v, %v", i, out, err)
		}
		a.pods = append(a.pods, fmt.Sprintf("%08d-0000-4000-8000-000000000000", i))
	}
	return a
}

func (a *assignEnv) annotations(i int) map[string]string {
	ann := crio(fmt.Sprintf("%08d-0000-4000-8000-000000000000", i), strings.Repeat(fmt.Sprint(i), 64))
	if i >= 3 && i <= 5 {
		ann[a.cfg.MBMAssignmentAnnotation] = "true"
	}
	return ann
}

// holders are the pods holding both counters in both domains; a pod holding some but not all
// fails the test (the policy never leaves one half-counted).
func (a *assignEnv) holders() []int {
	a.t.Helper()
	var out []int
	for i, pod := range a.pods {
		ga, err := a.groupAssignment("mon_groups/" + pod)
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

func (a *assignEnv) sweep() {
	a.t.Helper()
	if _, err := a.m.Sweep(); err != nil {
		a.t.Fatalf("sweep: %v", err)
	}
}

// end stops pod i's container (its only one), its processes gone: the pod goes idle, its
// group kept.
func (a *assignEnv) end(i int, container string) {
	a.t.Helper()
	crash(a.t, a.tasks("mon_groups/"+a.pods[i])...)
	if o := a.stop(container, a.annotations(i)); o.Action != vocab.Idle {
		a.t.Fatalf("stop pod %d: %+v", i, o)
	}
}

// since is every pod's record of when it got its counters.
func (a *assignEnv) since() map[string]map[string]time.Time {
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
func TestCounterPolicy(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		a := newAssignEnv(t, newEnv)
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
	})
}

// Arm MPAM's fixed mode (the simulator's MPAMFixed, fs/resctrl of Linux v7.2): mbm_assign_mode
// lists only "[mbm_event]" and refuses a switch. The policy needs none: it reads the mode,
// moves counters through mbm_L3_assignments as on ABMC, and meets no refusal (resctrl-mon
// never writes mbm_assign_mode, mbm_assign_on_mkdir or event_filter). Simulator only: the
// fake has no fixed mode.
func TestCounterPolicyMPAMFixed(t *testing.T) {
	t.Parallel()
	a := newAssignEnvOn(t, newEnv, resctrlsim.Options{MPAMFixed: true, MBMCounters: 8, L3Domains: 2})
	if got, err := os.ReadFile(filepath.Join(a.sim.Dir, "info/L3_MON/mbm_assign_mode")); err != nil || string(got) != "[mbm_event]\n" {
		t.Fatalf("mbm_assign_mode %q, %v: not the fixed mode", got, err)
	}
	if got := a.holders(); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("after mkdir: pods %v hold counters, want the first three", got)
	}
	a.now = a.now.Add(6 * time.Minute)
	a.sweep()
	if got := a.holders(); !slices.Equal(got, []int{3, 4, 5}) {
		t.Fatalf("past the hold time: pods %v hold counters, want those that asked (3, 4, 5)", got)
	}
	a.end(4, "c4")
	a.sweep()
	if got := a.holders(); len(got) != 3 || slices.Contains(got, 4) {
		t.Errorf("pod 4 ended: pods %v hold counters, want three others", got)
	}
	if strings.Contains(a.log.String(), "refused") || strings.Contains(a.log.String(), "no longer mbm_event") {
		t.Errorf("the policy met a refusal on a fixed-mode kernel:\n%s", a.log)
	}
}

// A write the kernel refuses is logged with its reason and lost nothing: the next sweep
// makes it. A sweep after the mode was switched away writes nothing; switched back, the
// policy puts the counters where it wants them.
func TestCounterPolicyFaults(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		a := newAssignEnv(t, newEnv)
		a.now = a.now.Add(6 * time.Minute)
		a.sweep()
		a.end(3, "c3")
		for n := 1; n <= 4; n++ { // the first n writes of the handover fail
			a.log.Reset()
			says := a.failAssignWrites(n, syscall.ENOSPC)
			a.sweep()
			if !strings.Contains(a.log.String(), "the kernel refused a write") || !strings.Contains(a.log.String(), says) {
				t.Errorf("%d refused writes: the log says\n%s", n, a.log)
			}
			a.clearFaults()
			a.sweep()
			got := a.holders()
			if len(got) != 3 || slices.Contains(got, 3) || !slices.Contains(got, 4) || !slices.Contains(got, 5) {
				t.Fatalf("%d refused writes, then a sweep: pods %v hold counters, want 4, 5 and one other", n, got)
			}
			// Pod 3 again, to hand on once more.
			c3 := fmt.Sprintf("c3-%d", n)
			if out, err := a.create(c3, a.proc(), a.annotations(3)); err != nil || out.Action != vocab.Joined {
				t.Fatalf("pod 3 back: %+v, %v", out, err)
			}
			a.now = a.now.Add(6 * time.Minute)
			a.sweep()
			if got := a.holders(); !slices.Equal(got, []int{3, 4, 5}) {
				t.Fatalf("pod 3 back: pods %v hold counters, want 3, 4, 5", got)
			}
			a.end(3, c3)
		}

		a.switchAssignMode("default")
		a.log.Reset()
		a.sweep()
		if strings.Contains(a.log.String(), "counter assignment") {
			t.Errorf("a sweep in default mode wrote:\n%s", a.log)
		}
		a.switchAssignMode(resctrlfs.AssignModeEvent)
		a.sweep()
		// The switch took the root group's counters too: the policy hands them all out.
		as, err := a.assignment()
		if err != nil {
			t.Fatal(err)
		}
		if got := a.holders(); len(got) < 3 || slices.Contains(got, 3) || !slices.Contains(got, 4) || !slices.Contains(got, 5) ||
			as.Available["0"] >= 2 || as.Available["1"] >= 2 {
			t.Errorf("mode back to mbm_event: pods %v hold counters and %v are free, want 4, 5 and others, none left free", got, as.Available)
		}
	})
}

// A write refused because the mode was switched away under the sweep (the kernel's mode file
// says default by the time the write fails) stops the round with a line saying so, instead of
// one refusal per write.
func TestCounterPolicyModeSwitchedMidRound(t *testing.T) {
	t.Parallel()
	fake := resctrlfake.New(8)
	fake.SetAssignMode(resctrlfs.AssignModeEvent, 1, 4)
	for _, g := range []string{"a", "b"} {
		if err := fake.Ensure(resctrlfs.Addr{Name: g}); err != nil {
			t.Fatal(err)
		}
	}
	fake.SwitchMode("default")
	var log bytes.Buffer
	m := &Manager{rs: fake, log: slog.New(slog.NewTextHandler(&log, nil)), now: time.Now}
	m.applyAssignments([]mbmpolicy.Write{
		{Path: "mon_groups/a", Domain: "0", Event: resctrlfs.MBMTotal},
		{Path: "mon_groups/b", Domain: "0", Event: resctrlfs.MBMTotal, Assign: true},
	})
	if n := strings.Count(log.String(), "switched under us"); n != 1 || strings.Contains(log.String(), "refused") {
		t.Errorf("the log says (want one line about the mode, no refusal):\n%s", log.String())
	}
}
