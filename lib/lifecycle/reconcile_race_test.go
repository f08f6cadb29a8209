package lifecycle

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/container"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
)

// Reconcile reads every process's cgroups once, then may wait up to reconcileLockWait for a
// pod's lock a hook holds. A process of the pod that meanwhile went elsewhere (a pid that
// exited and was given to another pod's process is the same thing to reconcile) is not the
// pod's any more: it must not be written into the pod's group.
func TestReconcileChecksCgroupAtWrite(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t)
		in := e.hold(0)
		in.release()
		idn := identity.Identity{Runtime: identity.NRI, PodUID: podA, SandboxID: sbA, Namespace: "default", PodName: "web"}
		live := []container.Container{{ID: "c1", Pid: in.Pid, Pod: &idn}}
		if _, err := e.m.Reconcile(live, ReconcileOptions{}); err != nil {
			t.Fatal(err)
		}
		// A second process of the container that nobody placed (an exec), and another pod's
		// container whose cgroup it will be in by the time reconcile writes.
		extra := proctest.Start(t, proctest.Sleep)
		in.join(extra)
		other := e.hold(0)

		held, release := make(chan struct{}), make(chan struct{})
		go func() {
			_ = e.m.store.Update(podA, time.Minute, func(*registry.Tx) error {
				close(held)
				<-release
				return nil
			})
		}()
		<-held
		type result struct {
			acts []Step
			err  error
		}
		done := make(chan result, 1)
		go func() {
			acts, err := e.m.Reconcile(live, ReconcileOptions{})
			done <- result{acts, err}
		}()
		waitLockWaiter(t, filepath.Join(e.cfg.StateDir, "locks", podA+".lock"))
		other.join(extra)
		close(release)
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		if got := e.tasks("mon_groups/" + podA); slices.Contains(got, extra) {
			t.Errorf("pid %d, in another pod's cgroup when reconcile wrote, was moved into the pod's group (tasks %v; steps %+v)", extra, got, r.acts)
		}
	})
}

// joinCgroup moves pid into the cgroup v1 directory dir.
func joinCgroup(t *testing.T, dir string, pid int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitLockWaiter waits until a process waits in flock(2) for the lock file path: /proc/locks
// lists a blocked waiter with "->" before its lock type.
func waitLockWaiter(t *testing.T, path string) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	ino := fmt.Sprintf(":%d ", st.Ino)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile("/proc/locks")
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if strings.Contains(line, "->") && strings.Contains(line, ino) {
				return
			}
		}
	}
	t.Fatalf("nobody waited for the lock %s within 20s", path)
}
