package exporter_test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/psi"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
)

// TestPodPressure: two containers of a pod in cgroups under one pod cgroup, as kubelet
// makes them: pressure for the pod's cgroup (container "") and for each container.
func TestPodPressure(t *testing.T) {
	t.Parallel()
	host := &cgroup.Host{}
	if err := psi.Available(*host); err != nil {
		t.Skip(err)
	}
	root, err := host.Dir("/")
	if err != nil {
		t.Skip(err)
	}
	e := newEnv(t, host)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	podDir := filepath.Join(root, "resctrl-mon-test-"+hex.EncodeToString(b))
	t.Cleanup(func() {
		// After the processes are killed (cleanups run last first): children, then the pod.
		for _, c := range []string{"a", "b", ""} {
			if err := os.Remove(filepath.Join(podDir, c)); err != nil && !os.IsNotExist(err) {
				t.Errorf("remove cgroup: %v", err)
			}
		}
	})
	for _, c := range []string{"a", "b"} {
		if err := os.MkdirAll(filepath.Join(podDir, c), 0o755); err != nil {
			t.Skipf("cannot make a cgroup v2 here: %v", err)
		}
	}
	for _, c := range []string{"a", "b"} {
		script := proctest.Sleep
		if c == "a" {
			script = proctest.Spin
		}
		pid := proctest.Start(t, script)
		if err := os.WriteFile(filepath.Join(podDir, c, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			t.Fatal(err)
		}
		e.placeIn(t, uidBusy, c, pid, "/"+filepath.Base(podDir)+"/"+c)
	}
	f := e.waitFor(t, "the pod's cpu pressure", func(f map[string]*dto.MetricFamily) bool {
		return f["resctrl_mon_pressure_cpu_waiting_seconds_total"] != nil
	})
	for _, c := range []string{"", "a", "b"} {
		if n := len(find(f["resctrl_mon_pressure_cpu_waiting_seconds_total"], "pod_uid="+uidBusy, "container="+c)); n != 1 {
			t.Errorf("cpu pressure of container %q: %d series, want 1", c, n)
		}
	}
	if n := one(t, f, "resctrl_mon_pressure_read_errors_total", "resource=cpu", "reason=missing"); n != 0 {
		t.Errorf("pressure read errors: %v", n)
	}
}
