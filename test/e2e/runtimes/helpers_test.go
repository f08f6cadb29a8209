package runtimes_test

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

// twoSleeps is a container whose init (a shell) has two children, so its cgroup holds
// three processes.
var twoSleeps = []string{"sh", "-c", "sleep 100 & sleep 100 & wait"}

// testAnnotations are set on every test container, so hooks can be checked to pass them.
func testAnnotations(t *testing.T) map[string]string {
	return map[string]string{
		"org.resctrl-mon.e2e/test": t.Name(),
		"org.resctrl-mon.e2e/kind": "hook-check",
	}
}

// waitForTwoSleeps waits until the cgroup of init holds init and exactly two children of
// it, and returns the thread ids it found.
func waitForTwoSleeps(t *testing.T, init int) []int {
	t.Helper()
	var tids []int
	err := poll.Until(10*time.Second, func() error {
		var err error
		tids, err = e2e.CgroupTasks(init)
		if err != nil {
			return err
		}
		if !slices.Contains(tids, init) {
			return fmt.Errorf("init %d not among cgroup tasks %v", init, tids)
		}
		var children []int
		for _, tid := range tids {
			if tid == init {
				continue
			}
			ppid, err := parentOf(tid)
			if err != nil {
				return err
			}
			if ppid != init {
				return fmt.Errorf("task %d in the cgroup has parent %d, not init %d", tid, ppid, init)
			}
			children = append(children, tid)
		}
		if len(children) != 2 {
			return fmt.Errorf("cgroup tasks %v: want init %d and its 2 sleeps", tids, init)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tids
}

// parentOf returns the parent pid of a task, from /proc/TID/status.
func parentOf(tid int) (int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no PPid", tid)
}

// checkAnnotations fails the test unless got holds every annotation in want (podman adds
// its own).
func checkAnnotations(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: annotation %s = %q, want %q (all: %v)", what, k, got[k], v, slices.Sorted(maps.Keys(got)))
		}
	}
}

// waitRecords waits until the recorder holds n records and returns them.
func waitRecords(t *testing.T, rec *e2e.HookRecorder, n int) []e2e.HookRecord {
	t.Helper()
	var recs []e2e.HookRecord
	err := poll.Until(10*time.Second, func() error {
		var err error
		recs, err = rec.Records()
		if err != nil {
			return err
		}
		if len(recs) != n {
			return fmt.Errorf("%d hook records, want %d: %+v", len(recs), n, recs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// checkStopped checks a poststop record.
func checkStopped(t *testing.T, r e2e.HookRecord, id string, ann map[string]string) {
	t.Helper()
	if r.State.Status != specs.StateStopped || r.State.ID != id {
		t.Errorf("poststop state: %s, want status stopped for %s", r.Raw, id)
	}
	if r.State.Pid != 0 {
		t.Errorf("poststop state: %s, want no pid", r.Raw)
	}
	checkAnnotations(t, "poststop state", r.State.Annotations, ann)
}
