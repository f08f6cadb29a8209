package nriplugin

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"
	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// The adapter checks the init's pid when the event arrives (checkInit), but the placement
// then waits for the pod's lock (up to 5 s: another container of the pod, a hook, reconcile)
// before it makes the group and writes the pid. An init that exits meanwhile leaves its pid to
// the next process, maybe another pod's, which must not be moved in. Here the init is checked
// and found in its container's cgroup, the placement is held at the pod's lock, and meanwhile
// the pid leaves the container's cgroup (as a reused pid would be elsewhere). Once the lock is
// let go, nothing moves: the container is refused for its identity, counted and logged, and
// no group is left holding an RMID for it.
func TestPidRecheckedAfterThePodsLock(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, resctrlsim.Options{}, nil)
		var log lockedBuffer
		e.startAdapterLogging(Options{}, &log)

		own := proctest.Hold(t, "sleep 600")       // the container's created init, in its cgroup
		elsewhere := proctest.Hold(t, "sleep 600") // another container's cgroup
		pd := pod(uidA, sbA, "default", "web")
		e.rt.runPod(pd)
		ctr := &api.Container{Id: "c1", Pid: uint32(own.Pid),
			Linux: &api.LinuxContainer{CgroupsPath: strings.TrimPrefix(own.Cgroup, "/sys/fs/cgroup/pids")}}

		// Hold the pod's lock, as another front end placing a container of the pod would.
		locked, release, unlocked := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			unlocked <- e.manager().Store().Update(uidA, time.Minute, func(*registry.Tx) error {
				close(locked)
				<-release
				return nil
			})
		}()
		<-locked
		released := false
		defer func() {
			if !released {
				close(release)
			}
		}()
		started := make(chan error, 1)
		go func() { started <- e.rt.sendStart(pd, ctr) }()

		// The adapter has checked the pid and waits in flock for the pod's lock.
		lockFile := filepath.Join(e.cfg.StateDir, "locks", uidA+".lock")
		if err := pollFor(10*time.Second, func() bool { return waitsInFlock(lockFile) }); err != nil {
			t.Fatalf("the adapter never waited for the pod's lock: %v", err)
		}
		// Meanwhile the pid leaves the container's cgroup.
		if err := os.WriteFile(filepath.Join(elsewhere.Cgroup, "cgroup.procs"), []byte(strconv.Itoa(own.Pid)), 0o644); err != nil {
			t.Fatal(err)
		}
		close(release)
		released = true
		if err := <-unlocked; err != nil {
			t.Fatal(err)
		}
		if err := <-started; err != nil {
			t.Fatalf("StartContainer under failurePolicy open: %v", err)
		}

		// The placement ends (in the background if it outlived the event's budget): counted.
		counts := map[string]uint64{}
		if err := pollFor(10*time.Second, func() bool {
			c, err := e.manager().Store().Counts()
			if err != nil {
				t.Fatal(err)
			}
			counts = c
			return c["adapter.refused"]+c["adapter.failed"]+c["adapter.created"]+c["adapter.joined"]+c["adapter.pending"] > 0
		}); err != nil {
			t.Fatalf("the placement never ended: %v (counts %v)", err, counts)
		}
		group := "mon_groups/" + uidA
		if e.exists(group) {
			t.Errorf("a group %s holding %v is left for an init that left its container's cgroup (pid %d)", group, e.tasks(group), own.Pid)
		}
		if !slices.Contains(e.tasks(""), own.Pid) {
			t.Errorf("pid %d left the root group", own.Pid)
		}
		if counts["adapter.refused"] != 1 || counts["failure.identity"] != 1 {
			t.Errorf("adapter.refused %d, failure.identity %d, want 1 each (all: %v)", counts["adapter.refused"], counts["failure.identity"], counts)
		}
		if _, owned, err := e.manager().Store().Load(uidA); err != nil || owned {
			t.Errorf("the pod is still recorded (owned %v, err %v)", owned, err)
		}
		if s := log.String(); !strings.Contains(s, "reason=identity") || !strings.Contains(s, "not in the container's cgroup") {
			t.Errorf("the refusal is not logged as such:\n%s", s)
		}
	})
}

// waitsInFlock reports whether a thread of this process is blocked in flock(2) on path (from
// /proc/self/task/*/syscall, whose first argument is the descriptor): an event to wait on,
// where a count of threads in flock would also count other tests' waiters.
func waitsInFlock(path string) bool {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "syscall"))
		if err != nil {
			continue // the thread exited while we looked
		}
		f := strings.Fields(string(b))
		if len(f) < 2 || f[0] != strconv.Itoa(unix.SYS_FLOCK) {
			continue
		}
		fd, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 32)
		if err != nil {
			continue
		}
		if target, err := os.Readlink("/proc/self/fd/" + strconv.FormatUint(fd, 10)); err == nil && target == path {
			return true
		}
	}
	return false
}
