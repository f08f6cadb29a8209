package nriplugin

import (
	"slices"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// A pod removed while the adapter was down ends at its restart, as RemovePodSandbox would
// have ended it, not after the retention window: the runtime's pod list at Synchronize proves
// its sandbox is gone. A pod the runtime never told us of (a hook's, under another runtime)
// is not in that list either, and keeps its group for the window.
func TestSynchronizeEndsPodsGoneMeanwhile(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, resctrlsim.Options{}, func(c *config.Config) { c.Retention = config.Duration(time.Hour) })
		a := e.startAdapter(Options{})
		pa := pod(uidA, sbA, "default", "gone")
		e.rt.runPod(pa)
		inA := proctest.Hold(t, "sleep 600")
		ctrA := &api.Container{Id: "ca"}
		if err := e.rt.start(pa, ctrA, uint32(inA.Pid), inA); err != nil {
			t.Fatal(err)
		}
		// The hook's pod, whose container has ended (its poststop never came).
		hookInit := proctest.Hold(t, "sleep 600")
		ann := map[string]string{identity.CRIOPodUID: uidB, identity.CRIOSandboxID: sbB, identity.CRIOContainerType: "container",
			identity.CRIOPodNamespace: "crio", identity.CRIOPodName: "hooked", identity.CRIOContainerID: "hc1"}
		e.placeAsHook("hc1", hookInit.Pid, ann)
		hookInit.Kill()
		if err := a.stop(); err != nil {
			t.Fatalf("adapter: %v", err)
		}

		// Missed: pod A ends.
		inA.Kill()
		e.rt.stopContainer(pa, ctrA)
		e.rt.removeContainer(pa, ctrA)
		e.rt.removePod(pa)

		e.startAdapter(Options{})
		if e.exists("mon_groups/" + uidA) {
			t.Errorf("the group of the pod removed while the adapter was down outlived the adapter's restart")
		}
		if got := e.snapshots(uidA); !slices.Equal(got, []snapshot.Kind{snapshot.Begin, snapshot.End}) {
			t.Errorf("snapshots of the removed pod %v, want .begin and .end", got)
		}
		if !e.exists("mon_groups/" + uidB) {
			t.Errorf("the hook's pod, which this runtime never told of, was ended before its retention window")
		}
	})
}
