package exporter_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestCounterPolicyPrometheus is issue 20's "done when" through real runc, the hook, serve and
// a real Prometheus: on a node in mbm_event mode with counters for three pods of nine, the
// pods the policy names have bandwidth series, the others have none and say so
// (resctrl_mon_mbm_assigned 0), across pods ending; a counter handed back to a pod restarts
// from zero and Prometheus sees no negative rate.
func TestCounterPolicyPrometheus(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{MBMAssign: resctrlsim.MBMAssignEvent, MBMCounters: 8, L3Domains: 1, NumRMIDs: 32},
		"retention: 1h\nmbmAssignment: policy\nmbmAssignmentHold: 0s\n")
	r := e2e.PreparedRuntime(t, "runc")
	sleep := []string{"sh", "-c", "sleep 600"}
	// Pod 0 works (a light busy loop), so it is the busiest when counters are free again.
	busy := []string{"sh", "-c", "while :; do i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; sleep 0.05; done"}
	uid := func(i int) string { return fmt.Sprintf("6a1f3c2e-0000-4000-8000-0000000000%02d", i) }
	for i := range 9 {
		ann := e2e.CRIOPod(uid(i), e2e.SandboxOf("abcdef012"[i]), "app")
		if i >= 6 {
			ann["resctrl-mon.io/bandwidth"] = "true"
		}
		args := sleep
		if i == 0 {
			args = busy
		}
		if err := r.Run(fmt.Sprintf("p%d", i), e.Bundle(ann, args...)); err != nil {
			t.Fatal(err)
		}
	}
	s := startServe(t, e.CfgPath)
	p := e2e.StartPrometheus(t, e2e.ScrapeTarget{Job: "resctrl-mon", Address: s.Addr})
	series := func(i int) string {
		return fmt.Sprintf(`resctrl_mon_mbm_total_bytes_total{pod_uid=%q}`, uid(i))
	}
	// The kernel gave the first three pods their counters at mkdir.
	waitQuery(t, p, series(0), 30*time.Second, count(1))
	endPod := func(id string) {
		t.Helper()
		// A poststop sweeps at most every 10 s: make the last sweep old first.
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(filepath.Join(e.StateDir, "last-sweep"), old, old); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := r.Delete(id, true); err != nil {
			t.Fatal(err)
		}
	}
	// A pod ends: the sweep hands every counter to the three that asked.
	endPod("p2")
	for _, i := range []int{6, 7, 8} {
		waitQuery(t, p, series(i), 30*time.Second, count(1))
	}
	for _, i := range []int{0, 1, 3} {
		waitQuery(t, p, series(i), 30*time.Second, count(0))
		waitQuery(t, p, fmt.Sprintf(`resctrl_mon_mbm_assigned{pod_uid=%q,counter="mbm_total_bytes"} == 0`, uid(i)), 30*time.Second, count(1))
	}
	// One that asked ends: its counters go to the busiest live pod, pod 0, whose count
	// starts from zero again.
	endPod("p7")
	waitQuery(t, p, series(0), 30*time.Second, count(1))
	waitQuery(t, p, series(7), 30*time.Second, count(0))
	waitQuery(t, p, `resctrl_mon_mon_data_resets_total{cause="assignment"} > 0`, 30*time.Second, count(1))
	// Let Prometheus take a few more scrapes of pod 0's new count, then look at every rate
	// it computed over the whole run.
	time.Sleep(4 * time.Second)
	res, err := p.Query(`min_over_time(rate(resctrl_mon_mbm_total_bytes_total[3s])[2m:1s]) < 0`)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 0 {
		t.Errorf("negative bandwidth rates in Prometheus: %+v\nserve:\n%s", res, s.Log())
	}
	res, err = p.Query(fmt.Sprintf(`rate(%s[3s])`, series(0)))
	if err != nil || len(res) != 1 || res[0].Value <= 0 {
		t.Errorf("pod 0's bandwidth after its counter came back: %+v, %v; want a positive rate", res, err)
	}
}
