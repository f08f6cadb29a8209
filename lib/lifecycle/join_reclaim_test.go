package lifecycle

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// joinOnly is resctrl as the hook's join has it in its own process (hooks/hook's asideGroups):
// it makes no group; an Ensure of a group that is not there says ErrGroupGone.
type joinOnly struct{ resctrlfs.Groups }

func (j joinOnly) Ensure(g resctrlfs.Addr) error {
	if !j.Exists(g) {
		return fmt.Errorf("%w: not a join", ErrGroupGone)
	}
	return j.Groups.Ensure(g)
}

// withOneIdleOneLive runs body on both backends, with the kernel's limbo off and on, on a
// node of 3 RMIDs (the root's and two) where idle groups are reclaimed: pod n1's group idle
// within its retention, pod 2's live, so the next pod's placement reclaims pod n1's.
func withOneIdleOneLive(t *testing.T, body func(t *testing.T, e *env, c *churn, n1 int)) {
	for _, lim := range []bool{false, true} {
		t.Run(fmt.Sprintf("limbo %v", lim), func(t *testing.T) {
			t.Parallel()
			onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
				e := newEnv(t, simOpts(resctrlsim.Options{NumRMIDs: 3, Limbo: lim, LimboInterval: 20 * time.Millisecond}),
					withConfig(func(c *config.Config) { c.RMIDReclaim = config.RMIDReclaimIdle }))
				c := &churn{env: e}
				n1, pid1, _, err := c.start()
				if err != nil {
					t.Fatal(err)
				}
				c.end(n1, pid1)
				if _, _, _, err := c.start(); err != nil { // pod 2, live
					t.Fatal(err)
				}
				body(t, e, c, n1)
			})
		})
	}
}

// A container joining its pod's idle group (the hook's join, which found the group live)
// while a reclaim ends that group for another pod: the join finds the group gone, takes the
// container back and records no failure (nothing failed: its front end places it afresh),
// leaving no record behind; placed afresh, the container is its pod's new life. Swept: the
// kernel's limbo off and on.
func TestJoinRacingAReclaimRecordsNoFailure(t *testing.T) {
	t.Parallel()
	withOneIdleOneLive(t, func(t *testing.T, e *env, c *churn, n1 int) {
		// The join has found pod 1's group live (idle within its retention) and is
		// about to place; pod 3's placement reclaims that group first.
		join, err := NewWith(e.cfg, slog.New(slog.DiscardHandler), joinOnly{e.m.rs})
		if err != nil {
			t.Fatal(err)
		}
		join.SetClock(func() time.Time { return e.now })
		join.cg = e.m.cg
		if n3, _, out, err := c.start(); err != nil || out.Action != vocab.Created {
			t.Fatalf("pod %d: %+v, %v; want created, pod 1's group reclaimed", n3, out, err)
		}
		if c.exists("mon_groups/" + podN(n1)) {
			t.Fatal("pod 1's idle group was not reclaimed")
		}
		a := crio(podN(n1), sbN(n1))
		idn, err := identity.FromAnnotations("c1b", a)
		if err != nil {
			t.Fatal(err)
		}
		out, err := join.Place(Placement{ContainerID: "c1b", Pid: c.proc(), Pod: idn, Annotations: a})
		if !errors.Is(err, ErrGroupGone) {
			t.Fatalf("the join after its group was reclaimed: %+v, %v; want ErrGroupGone", out, err)
		}
		failures, ferr := e.m.Store().Failures(time.Time{})
		if ferr != nil || len(failures) != 0 {
			t.Errorf("failures recorded (%v): %+v; want none", ferr, failures)
		}
		counts, _ := e.m.Store().Counts()
		if n := counts[vocab.FailureCount(vocab.FailCreate)]; n != 0 {
			t.Errorf("%d creation failures counted", n)
		}
		if _, owned, _ := e.m.Store().Load(podN(n1)); owned {
			t.Errorf("the join left a record of pod 1")
		}
		if g, _ := e.m.Store().ContainerGroup("c1b"); g != "" {
			t.Errorf("the join left its container bound to %q", g)
		}
	})
}

// racingJoin is resctrl that, once reclaim has removed the group at victim, starts join (a
// container of that pod arriving: it waits for the pod's lock, finds its group gone and makes
// one) and holds the reclaimer's next mkdir until join is done, or a while: the order in
// which a join would take the RMID the reclaim freed.
type racingJoin struct {
	resctrlfs.Groups
	victim  string
	join    func()
	started chan struct{}
	done    chan struct{}
}

func (r *racingJoin) Remove(g resctrlfs.Addr) error {
	err := r.Groups.Remove(g)
	if g.Name == r.victim && r.started == nil {
		r.started, r.done = make(chan struct{}), make(chan struct{})
		close(r.started)
		go func() { defer close(r.done); r.join() }()
	}
	return err
}

func (r *racingJoin) Ensure(g resctrlfs.Addr) error {
	if r.started != nil && g.Name != r.victim {
		// Long enough for a join that can run to finish; one waiting for the pod's lock
		// cannot, however long this waits.
		select {
		case <-r.done:
		case <-time.After(2 * time.Second):
		}
	}
	return r.Groups.Ensure(g)
}

// The RMID a reclaim frees goes to the pod it was freed for: a container of the reclaimed pod
// arriving meanwhile (waiting for its pod's lock, then finding its group gone) cannot take it,
// since the new group is made before the reclaimed group's lock is let go. That container is
// its pod's new life, pending here (no idle group is left to reclaim), as a pod that arrives
// on a full node is.
func TestReclaimedRMIDGoesToThePodItWasFreedFor(t *testing.T) {
	t.Parallel()
	withOneIdleOneLive(t, func(t *testing.T, e *env, c *churn, n1 int) {
		var joinOut Outcome
		var joinErr error
		a := crio(podN(n1), sbN(n1))
		idn, err := identity.FromAnnotations("c1b", a)
		if err != nil {
			t.Fatal(err)
		}
		joinPid := c.proc()
		race := &racingJoin{Groups: e.m.rs, victim: podN(n1)}
		race.join = func() {
			joinOut, joinErr = e.m.Place(Placement{ContainerID: "c1b", Pid: joinPid, Pod: idn, Annotations: a})
		}
		e.m.rs = race
		n3, pid3, out, err := c.start()
		if race.done == nil {
			t.Fatal("pod 1's group was not reclaimed")
		}
		<-race.done
		if err != nil || out.Action != vocab.Created {
			t.Fatalf("pod %d, for which pod 1's group was reclaimed: %+v, %v; want created", n3, out, err)
		}
		if !slices.Contains(c.tasks("mon_groups/"+podN(n3)), pid3) {
			t.Errorf("pod %d's container is not in its group", n3)
		}
		if !errors.Is(joinErr, resctrlfs.ErrNoRMID) || joinOut.Action != vocab.Pending {
			t.Errorf("pod 1's container arriving during the reclaim: %+v, %v; want pending", joinOut, joinErr)
		}
	})
}
