package nriplugin

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestCounterPolicyThroughNRI: the bandwidth counter policy (mbmAssignment: policy) as the
// NRI adapter applies it, on its sweep timer, to pods it placed from NRI's events: on a node
// in mbm_event mode with counters for three of nine pods, the three whose pods are annotated
// to ask get them, nothing churns, and when one of them is removed its counters go on.
func TestCounterPolicyThroughNRI(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		// 10 counters: the root group holds 2, the env's foreign group 2 (never ours to give).
		e := newEnv(t, resctrlsim.Options{MBMAssign: resctrlsim.MBMAssignEvent, MBMCounters: 10, L3Domains: 1, NumRMIDs: 32},
			func(c *config.Config) {
				c.Retention = config.Duration(time.Hour)
				c.MBMAssignment = config.MBMAssignPolicy
				c.MBMAssignmentHold = 0
			})
		e.startAdapter(Options{SweepEvery: 100 * time.Millisecond})
		uid := func(i int) string { return fmt.Sprintf("6a1f3c2e-0000-4000-8000-0000000001%02d", i) }
		pods := make([]*api.PodSandbox, 9)
		ctrs := make([]*api.Container, 9)
		inits := make([]*proctest.Init, 9)
		for i := range pods {
			pods[i] = pod(uid(i), fmt.Sprintf("%064x", 0xab00+i), "default", fmt.Sprintf("p%d", i))
			if i >= 6 {
				pods[i].Annotations = map[string]string{e.cfg.MBMAssignmentAnnotation: "true"}
			}
			e.rt.runPod(pods[i])
			inits[i] = proctest.Hold(t, "sleep 600")
			ctrs[i] = &api.Container{Id: fmt.Sprintf("c%02d", i)}
			if err := e.rt.start(pods[i], ctrs[i], uint32(inits[i].Pid), inits[i]); err != nil {
				t.Fatal(err)
			}
		}
		holders := func() ([]int, error) {
			var out []int
			for i := range pods {
				ga, err := e.groupAssignment("mon_groups/" + uid(i))
				if err != nil {
					if i == 7 && !e.exists("mon_groups/"+uid(i)) {
						continue // removed below
					}
					return nil, err
				}
				if n := len(ga.Assigned["0"]); n == 2 {
					out = append(out, i)
				} else if n != 0 {
					return nil, fmt.Errorf("pod %d holds %v: half-counted", i, ga.Assigned)
				}
			}
			return out, nil
		}
		waitHolders := func(what string, ok func([]int) bool) []int {
			t.Helper()
			var got []int
			var err error
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if got, err = holders(); err == nil && ok(got) {
					return got
				}
			}
			t.Fatalf("%s: holders %v (%v)", what, got, err)
			return nil
		}
		waitHolders("the pods that asked", func(h []int) bool { return slices.Equal(h, []int{6, 7, 8}) })
		// Many sweeps later nothing moved.
		time.Sleep(time.Second)
		if got, err := holders(); err != nil || !slices.Equal(got, []int{6, 7, 8}) {
			t.Errorf("after ten more sweeps: holders %v (%v), want 6, 7, 8 still", got, err)
		}
		// Pod 7 is removed: its counters go on to a live pod.
		inits[7].Kill()
		e.rt.stopContainer(pods[7], ctrs[7])
		e.rt.removeContainer(pods[7], ctrs[7])
		e.rt.removePod(pods[7])
		got := waitHolders("pod 7's counters handed on", func(h []int) bool {
			return len(h) == 3 && !slices.Contains(h, 7) && slices.Contains(h, 6) && slices.Contains(h, 8)
		})
		t.Logf("holders after pod 7 ended: %v", got)
	})
}
