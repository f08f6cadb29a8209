package lifecycle

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// The kernel's limbo (fs/resctrl/monitor.c, see resctrlsim's limbo.go): an rmdir'd group's
// RMID is dirty until the limbo worker's next pass (every second) reads its llc_occupancy below
// info/L3_MON/max_threshold_occupancy. Reclaim ends an idle group only when that pass will
// free its RMID (its occupancy is below the threshold already), and the placement waits for
// that pass: the new pod is created, as without limbo. An idle group whose lines are still in
// the cache is left alone (its RMID would stay dirty): the new pod is pending, and completed
// by the first sweep after the lines have gone, which reclaims it then. Swept: the idle
// groups' occupancy (nil, under, at and above the threshold) and how many sweeps the lines
// stay (limbo's duration, in sweeps).
func TestReclaimWithLimbo(t *testing.T) {
	t.Parallel()
	const th = resctrlsim.MaxThresholdOccupancy
	for _, occ := range []uint64{0, th - 64<<10, th, 4 * th} {
		for _, stays := range []int{0, 2} {
			if occ < th && stays > 0 {
				continue // clean lines do not stay
			}
			t.Run(fmt.Sprintf("occupancy %d, %d sweeps", occ, stays), func(t *testing.T) {
				t.Parallel()
				onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
					testReclaimWithLimbo(t, newEnv, occ, stays)
				})
			})
		}
	}
}

func testReclaimWithLimbo(t *testing.T, newEnv newEnvFunc, occ uint64, stays int) {
	// The node: 6 RMIDs, 5 idle groups; the worker every 50ms.
	e := newEnv(t, simOpts(resctrlsim.Options{NumRMIDs: 6, Limbo: true, LimboInterval: 50 * time.Millisecond}),
		withConfig(func(c *config.Config) { c.RMIDReclaim = config.RMIDReclaimIdle }))
	c := &churn{env: e}
	b := e.backend()
	for range 5 {
		n, pid, _, err := c.start()
		if err != nil {
			t.Fatal(err)
		}
		c.end(n, pid)
		b.SetOccupancy("mon_groups/"+podN(n), occ)
		c.now = c.now.Add(time.Second)
	}
	n, pid, out, err := c.start()
	group := "mon_groups/" + podN(n)
	clean := occ < resctrlsim.MaxThresholdOccupancy
	if clean {
		// Pod 1's group, idle longest, ended; its RMID was the placement's after one pass.
		if err != nil || out.Action != vocab.Created {
			t.Fatalf("pod %d on a node of idle groups whose lines are gone: %+v, %v; want created", n, out, err)
		}
		if c.exists("mon_groups/" + podN(1)) {
			t.Errorf("pod 1's group, idle longest, is still there")
		}
		for o := 2; o <= 5; o++ {
			if !c.exists("mon_groups/" + podN(o)) {
				t.Errorf("pod %d's group was ended too", o)
			}
		}
		if !slices.Contains(c.tasks(group), pid) {
			t.Errorf("pod %d's container is not in its group", n)
		}
		return
	}
	if !errors.Is(err, resctrlfs.ErrNoRMID) || out.Action != vocab.Pending {
		t.Fatalf("pod %d on a node of idle groups whose lines are still counted: %+v, %v; want pending", n, out, err)
	}
	idleKept := func(when string) {
		t.Helper()
		for o := 1; o <= 5; o++ {
			if !c.exists("mon_groups/" + podN(o)) {
				t.Fatalf("%s: pod %d's idle group was ended, though its RMID would stay in limbo", when, o)
			}
		}
	}
	idleKept("at the placement")
	for i := range stays {
		b.LimboPass()
		if _, err := c.m.Sweep(); err != nil {
			t.Fatal(err)
		}
		idleKept(fmt.Sprintf("sweep %d with the lines still there", i+1))
		if c.exists(group) {
			t.Fatalf("sweep %d: the pending pod was given a group", i+1)
		}
	}
	// The lines leave the cache: the next sweep reclaims pod 1's group and completes the pod.
	for o := 1; o <= 5; o++ {
		b.ClearOccupancy("mon_groups/" + podN(o))
	}
	steps, err := c.m.CompletePending()
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[0].Action != vocab.Reclaimed || steps[0].Group != "mon_groups/"+podN(1) || steps[1].Action != vocab.Completed {
		t.Fatalf("completing the pending pod once the lines were gone: %+v; want pod 1's group reclaimed, then pod %d completed", steps, n)
	}
	if !slices.Contains(c.tasks(group), pid) {
		t.Errorf("pod %d's container is not in its group", n)
	}
	rec, _, _ := c.m.Store().Load(podN(n))
	if rec.Pending != "" || !rec.LateAssigned {
		t.Errorf("record %+v: want not pending, late-assigned", rec)
	}
}

// An RMID in limbo for good (a held LimboTime: lines some neighbour keeps counted) makes the
// placement that reclaimed wait for the worker's pass a bounded time only: the pod is pending,
// and the idle group, whose own occupancy was clean, was ended.
func TestReclaimWaitsForLimboBounded(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, simOpts(resctrlsim.Options{NumRMIDs: 3, LimboTime: time.Hour}))
		c := &churn{env: e}
		for range 2 {
			n, pid, _, err := c.start()
			if err != nil {
				t.Fatal(err)
			}
			c.end(n, pid)
			e.backend().SetOccupancy("mon_groups/"+podN(n), 0)
		}
		n, _, out, err := c.start()
		if !errors.Is(err, resctrlfs.ErrNoRMID) || out.Action != vocab.Pending {
			t.Fatalf("pod %d: %+v, %v; want pending", n, out, err)
		}
	})
}

// A pending pod is completed by the housekeeping right after a pod's end freed an RMID, under
// the kernel's limbo too: the RMID is dirty until the worker's next pass, which
// CompletePending waits for (bounded), since nothing else would retry the pod then (the NRI
// adapter runs it once, after the pod's end).
func TestCompletePendingAwaitsLimbo(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, simOpts(resctrlsim.Options{NumRMIDs: 3, Limbo: true, LimboInterval: 50 * time.Millisecond}))
		c := &churn{env: e}
		_, first, _, err := c.start()
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := c.start(); err != nil {
			t.Fatal(err)
		}
		n, pid, out, err := c.start()
		if !errors.Is(err, resctrlfs.ErrNoRMID) || out.Action != vocab.Pending {
			t.Fatalf("pod %d on a full node of live pods: %+v, %v; want pending", n, out, err)
		}
		crash(t, first)
		if o, err := c.m.EndPod(PodEnd{PodUID: podN(1), SandboxID: sbN(1)}); err != nil || o.Action != vocab.Removed {
			t.Fatalf("end pod 1: %+v, %v", o, err)
		}
		steps, err := c.m.CompletePending()
		if err != nil || len(steps) != 1 || steps[0].Action != vocab.Completed {
			rec, owned, lerr := c.m.Store().Load(podN(n))
			t.Logf("pod record %+v (owned %v, %v), group there %v", rec, owned, lerr, c.exists("mon_groups/"+podN(n)))
			t.Fatalf("completing pod %d right after pod 1's end, its RMID in limbo: %+v, %v; want completed", n, steps, err)
		}
		if !slices.Contains(c.tasks("mon_groups/"+podN(n)), pid) {
			t.Errorf("pod %d's container is not in its group", n)
		}
	})
}
