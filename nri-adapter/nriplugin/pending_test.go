package nriplugin

import (
	"slices"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// A pending pod is completed as soon as a pod's end frees an RMID, with no further event of
// its own and long before the housekeeping timer: under a real kubelet the pod's containers
// may never start again, and Synchronize comes only at a restart.
func TestPendingPodCompletedWhenAPodEnds(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		for _, retention := range []time.Duration{0, 5 * time.Minute} {
			t.Run(retention.String(), func(t *testing.T) {
				t.Parallel()
				// RMID 0 is the root's and the foreign group holds one: one pod fits.
				e := newEnv(t, resctrlsim.Options{NumRMIDs: 3}, func(c *config.Config) { c.Retention = config.Duration(retention) })
				e.startAdapter(Options{SweepEvery: time.Hour})
				pa, pb := pod(uidA, sbA, "default", "first"), pod(uidB, sbB, "default", "second")
				e.rt.runPod(pa)
				e.rt.runPod(pb)
				inA := proctest.Hold(t, "sleep 600")
				ctrA := &api.Container{Id: "ca"}
				if err := e.rt.start(pa, ctrA, uint32(inA.Pid), inA); err != nil {
					t.Fatal(err)
				}
				inB := proctest.Hold(t, "sleep 600")
				if err := e.rt.start(pb, &api.Container{Id: "cb"}, uint32(inB.Pid), inB); err != nil {
					t.Fatal(err)
				}
				if rec := e.record(uidB); rec.Pending == "" {
					t.Fatalf("the pod without an RMID is not pending: %+v", rec)
				}
				inA.Kill()
				e.rt.stopContainer(pa, ctrA)
				e.rt.removeContainer(pa, ctrA)
				e.rt.removePod(pa)
				group := "mon_groups/" + uidB
				// The completion moves the pod's tasks in, then commits its record: wait for both.
				if err := pollFor(10*time.Second, func() bool {
					return e.exists(group) && slices.Contains(e.tasks(group), inB.Pid) && e.record(uidB).Pending == ""
				}); err != nil {
					t.Fatalf("the pending pod after another pod's end: %v", err)
				}
				if rec := e.record(uidB); rec.Pending != "" || !rec.LateAssigned {
					t.Errorf("completed pod: %+v; want not pending, late-assigned", rec)
				}
			})
		}
	})
}
