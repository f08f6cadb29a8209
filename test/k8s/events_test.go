package k8s

import (
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// podEvents: a pod started while the node has no free RMID (every mkdir of a group refused
// ENOSPC, as the kernel refuses it) runs pending, and `kubectl describe pod` shows its owner
// the Warning; once an RMID frees (the fault cleared), the sweep or reconcile places it and
// the Normal follows. The exporter posts both from the records: nothing on the placement's
// path asks the API server.
func (s *scenario) podEvents() {
	t := s.t
	// More refusals than the test can use up: the adapter's sweep and reconcile retry every
	// 2 s, each try one mkdir.
	s.sim.FailNext(resctrlsim.OpMkdir, 1<<20, syscall.ENOSPC)
	cleared := false
	defer func() {
		if !cleared {
			s.sim.ClearFaults()
		}
	}()
	s.Apply(`apiVersion: v1
kind: Pod
metadata: {name: starved, namespace: default}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: sleeper
    image: localhost/busybox:k8s
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`)
	s.requireEvent("starved", "Warning", "ResctrlMonPending", "without a monitoring group")
	s.sim.ClearFaults()
	cleared = true
	s.requireEvent("starved", "Normal", "ResctrlMonPlaced", "has its monitoring group")
	// Posted once each: the exporter read the records many times meanwhile.
	out := s.Kubectl("-n", "default", "get", "events", "--field-selector", "involvedObject.name=starved",
		"-o", "jsonpath={range .items[*]}{.reason} {.count}{\"\\n\"}{end}")
	for _, reason := range []string{"ResctrlMonPending", "ResctrlMonPlaced"} {
		if n := strings.Count(out, reason+" "); n != 1 || !strings.Contains(out, reason+" 1\n") {
			t.Errorf("events of pod starved:\n%s\nwant one %s, count 1", out, reason)
		}
	}
	s.Kubectl("-n", "default", "delete", "pod", "starved", "--wait=true", "--timeout=60s")
	t.Logf("Events on pods (%s, %s): a pending pod's Warning and its Normal once placed, in kubectl describe", s.mode, s.Runtime)
}

// requireEvent waits for `kubectl describe pod` to list an Event of that type and reason whose
// message holds text.
func (s *scenario) requireEvent(pod, typ, reason, text string) {
	s.t.Helper()
	s.Eventually(60*time.Second, fmt.Sprintf("kubectl describe pod %s shows %s %s", pod, typ, reason), func() (bool, string) {
		out, err := s.TryKubectl("-n", "default", "describe", "pod", pod)
		if err != nil {
			return false, err.Error()
		}
		_, events, _ := strings.Cut(out, "\nEvents:")
		for _, line := range strings.Split(events, "\n") {
			f := strings.Fields(line)
			if len(f) > 2 && f[0] == typ && f[1] == reason && strings.Contains(line, text) {
				return true, ""
			}
		}
		return false, "Events:" + events
	})
}
