package nriplugin

import (
	"slices"
	"testing"

	"github.com/containerd/nri/pkg/api"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// A container whose Linux.Rdt sets enableMonitoring (closID "/": the root class): its runtime
// made mon_groups/<container id> and put the held init in it. The adapter places it in its
// pod's group at StartContainer and removes runc's group (one RMID for the container); a
// crun's init keeps crun's group (crun's exec writes into it).
func TestStartContainerRemovesRuncsGroup(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, resctrlsim.Options{}, func(*config.Config) {})
		e.startAdapter(Options{})
		p := pod(uidA, sbA, "default", "web")
		e.rt.runPod(p)
		forker.get(t, "../../test/e2e/forker")
		for _, c := range []struct {
			id, comm string
			removed  bool
		}{
			{"c-runc", "runc:[2:INIT]", true},
			{"c-crun", "crun", false},
		} {
			in := proctest.HoldAs(t, c.comm, forker.path)
			own, err := e.backend().RuntimeGroup("", c.id, in.Pid)
			if err != nil {
				t.Fatal(err)
			}
			ctr := &api.Container{Id: c.id, Name: "app", Linux: &api.LinuxContainer{
				Rdt: &api.LinuxRdt{ClosId: &api.OptionalString{Value: "/"}, EnableMonitoring: &api.OptionalBool{Value: true}}}}
			if err := e.rt.start(p, ctr, uint32(in.Pid), in); err != nil {
				t.Fatal(err)
			}
			in.WaitLine(t, "ready")
			if e.sim != nil {
				// The simulator follows the init's forks; the fake does not.
				e.placed("mon_groups/"+uidA, in)
			} else if !slices.Contains(e.tasks("mon_groups/"+uidA), in.Pid) {
				t.Errorf("%s: the init %d is not in its pod's group", c.comm, in.Pid)
			}
			if e.exists(own) == c.removed {
				t.Errorf("%s: the runtime's group %s there: %v, want %v", c.comm, own, e.exists(own), !c.removed)
			}
		}
	})
}
