package nriplugin

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/containerd/nri/pkg/api"

	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// A pid the runtime sends is only a number: one that exited and was given to another pod's
// process must not move that process (or, late, every task of its cgroup) into this pod's
// group. The container's cgroupsPath names where its init is; a pid elsewhere is refused,
// logged and counted, and nothing moves. Through NRI's runtime side, at both places the
// adapter writes: StartContainer (the init's threads) and PostStartContainer (late: every
// task of the pid's cgroup).
func TestPidOutsideTheContainersCgroupRefused(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		for _, late := range []bool{false, true} {
			name := map[bool]string{false: "StartContainer", true: "PostStartContainer"}[late]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, resctrlsim.Options{}, nil)
				var log lockedBuffer
				e.startAdapterLogging(Options{}, &log)

				// Another pod's process, forked and running in its own container's cgroup.
				other := lateInit(t)
				other.Release(t)
				other.WaitLine(t, "ready")
				other.WaitTasks(t, lateTasks)
				otherTasks := other.Tasks(t)

				// This pod's container: its own init, in its own cgroup.
				own := lateInit(t)
				pd := pod(uidA, sbA, "default", "web")
				e.rt.runPod(pd)
				ctr := &api.Container{Id: "c1", Linux: &api.LinuxContainer{CgroupsPath: strings.TrimPrefix(own.Cgroup, "/sys/fs/cgroup/pids")}}
				if !late {
					// The runtime names the other pod's process as this container's init.
					ctr.Pid = uint32(other.Pid)
					if err := e.rt.sendStart(pd, ctr); err != nil {
						t.Fatalf("StartContainer under failurePolicy open: %v", err)
					}
				} else {
					// No pid at StartContainer, and the init has forked (its cgroup does not name
					// it): placed late, by the pid PostStartContainer sends, the other pod's.
					own.Release(t)
					own.WaitLine(t, "ready")
					own.WaitTasks(t, lateTasks)
					if err := e.rt.sendStart(pd, ctr); err != nil {
						t.Fatal(err)
					}
					ctr.Pid = uint32(other.Pid)
					if err := e.rt.sendPostStart(pd, ctr); err != nil {
						t.Fatal(err)
					}
				}

				group := "mon_groups/" + uidA
				if e.exists(group) {
					_ = e.tasks("") // the simulator takes in the forks it has queued
					if in := e.tasks(group); len(in) > 0 {
						t.Errorf("%s holds tasks %v (the other pod's: %v)", group, in, otherTasks)
					}
					t.Errorf("a group %s was made for a pid outside the container's cgroup", group)
				}
				if root := e.tasks(""); !containsAll(root, otherTasks) {
					t.Errorf("the other pod's tasks %v left the root group (it holds %v)", otherTasks, root)
				}
				counts, err := e.manager().Store().Counts()
				if err != nil {
					t.Fatal(err)
				}
				if counts["adapter.refused"] != 1 {
					t.Errorf("adapter.refused counted %d, want 1 (all: %v)", counts["adapter.refused"], counts)
				}
				if s := log.String(); !strings.Contains(s, "outcome=refused") || !strings.Contains(s, "not in the container's cgroup") {
					t.Errorf("the refusal is not logged as such:\n%s", s)
				}
			})
		}
	})
}

func containsAll(have, want []int) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// lockedBuffer is a log the adapter's goroutines write while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Synchronize (a start, a runtime's restart) hands reconcile the runtime's running
// containers, whose pids it read any time before: reconcile moves every task of a live
// container's pid's cgroup. A pid outside the container's cgroup is refused and counted
// there too, and nothing moves.
func TestSynchronizeRefusesPidOutsideTheContainersCgroup(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, resctrlsim.Options{}, nil)
		other := lateInit(t)
		other.Release(t)
		other.WaitLine(t, "ready")
		other.WaitTasks(t, lateTasks)
		own := proctest.Hold(t, "sleep 600")
		pd := pod(uidA, sbA, "default", "web")
		ctr := &api.Container{Id: "c1", PodSandboxId: sbA, State: api.ContainerState_CONTAINER_RUNNING, Pid: uint32(other.Pid),
			Linux: &api.LinuxContainer{CgroupsPath: strings.TrimPrefix(own.Cgroup, "/sys/fs/cgroup/pids")}}
		e.rt.pods[pd.Id], e.rt.ctrs[ctr.Id] = pd, ctr
		e.startAdapter(Options{})
		if group := "mon_groups/" + uidA; e.exists(group) {
			_ = e.tasks("")
			t.Errorf("a group %s was made for a pid outside the container's cgroup; it holds %v (the other pod's: %v)",
				group, e.tasks(group), other.Tasks(t))
		}
		counts, err := e.manager().Store().Counts()
		if err != nil {
			t.Fatal(err)
		}
		if counts["adapter.refused"] != 1 {
			t.Errorf("adapter.refused counted %d, want 1 (all: %v)", counts["adapter.refused"], counts)
		}
	})
}
