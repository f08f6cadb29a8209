package hook_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestHookCounterPolicy: nine pods through real runc and the hook on a node in mbm_event mode
// with counters for three (8, the root group holding 2). The kernel gives the first three
// theirs at mkdir; the sweep a poststop hook runs hands them to the three pods annotated to
// ask; when one of those ends, its poststop's sweep hands its counters on.
func TestHookCounterPolicy(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{MBMAssign: resctrlsim.MBMAssignEvent, MBMCounters: 8, L3Domains: 1, NumRMIDs: 32},
		"retention: 1h\nmbmAssignment: policy\nmbmAssignmentHold: 0s\n")
	r := e2e.PreparedRuntime(t, "runc")
	args := []string{"sh", "-c", "sleep 600"}
	var uids []string
	for i := range 9 {
		uid := fmt.Sprintf("6a1f3c2e-0000-4000-8000-0000000000%02d", i)
		ann := e2e.CRIOPod(uid, e2e.SandboxOf("abcdef012"[i]), "app")
		if i >= 6 {
			ann["resctrl-mon.io/bandwidth"] = "true"
		}
		if err := r.Run(fmt.Sprintf("p%d", i), e.Bundle(ann, args...)); err != nil {
			t.Fatal(err)
		}
		uids = append(uids, uid)
	}
	holders := func() []int {
		t.Helper()
		var out []int
		for i, uid := range uids {
			ga, err := resctrlfs.ReadGroupAssignment(e.Sim.Dir, "mon_groups/"+uid)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(ga.Assigned["0"]); n == 2 {
				out = append(out, i)
			} else if n != 0 {
				t.Fatalf("pod %d holds %v: half-counted", i, ga.Assigned)
			}
		}
		return out
	}
	if got := holders(); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("after mkdir: pods %v hold counters, want the first three", got)
	}
	// A poststop sweeps at most every 10 s: make the last sweep old, then end a container.
	stopSweeping := func(id string) {
		t.Helper()
		old := time.Now().Add(-time.Hour)
		stamp := filepath.Join(e.StateDir, "last-sweep")
		if err := os.Chtimes(stamp, old, old); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := r.Delete(id, true); err != nil {
			t.Fatal(err)
		}
	}
	stopSweeping("p0")
	if got := holders(); !slices.Equal(got, []int{6, 7, 8}) {
		t.Fatalf("after a sweep: pods %v hold counters, want those that asked (6, 7, 8)\n%s", got, e.Log())
	}
	stopSweeping("p7")
	got := holders()
	if len(got) != 3 || slices.Contains(got, 7) || slices.Contains(got, 0) || !slices.Contains(got, 6) || !slices.Contains(got, 8) {
		t.Errorf("pod 7 ended: pods %v hold counters, want 6, 8 and a live one\n%s", got, e.Log())
	}
	if n := strings.Count(e.Log(), "msg=\"counter assignment\""); n != 2*(3+3)+2*(1+1) {
		t.Errorf("the hook log has %d counter writes, want 16 (two events of 3 pods out and 3 in, then of 1 and 1):\n%s", n, e.Log())
	}
}
