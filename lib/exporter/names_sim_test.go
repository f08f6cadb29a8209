package exporter_test

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/psi"
	"github.com/resctrl-mon/resctrl-mon/test/cgrouptest"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
)

// TestPressureByContainerName: a pod of two named containers, with ids of 64 hex digits as
// containerd and CRI-O make them, and one placed without a name (as a version that recorded
// none did): the named ones are exported as container="<name>" with their id in
// container_id, the unnamed one under its id in both, the pod's own cgroup with both "".
// Every series of the metric carries the same labels (the pedantic registry checks it).
func TestPressureByContainerName(t *testing.T) {
	t.Parallel()
	host := &cgroup.Host{}
	if err := psi.Available(*host); err != nil {
		cgrouptest.SkipOrFail(t, "no pressure files: %v", err)
	}
	root, rootErr := host.Dir("/")
	podDir := cgrouptest.New(t, root, rootErr)
	e := newEnv(t, host)
	ids := map[string]string{"app": hexID(t), "sidecar": hexID(t), "": hexID(t)}
	for _, name := range []string{"app", "sidecar", ""} {
		sub := "c-" + ids[name][:8]
		dir := childCgroup(t, podDir, sub)
		pid := proctest.Start(t, proctest.Sleep)
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			t.Fatal(err)
		}
		e.placeNamed(t, uidBusy, ids[name], name, pid, "/"+filepath.Base(podDir)+"/"+sub)
	}
	const metric = "resctrl_mon_pressure_cpu_waiting_seconds_total"
	f := e.waitFor(t, "the containers' cpu pressure", func(f map[string]*dto.MetricFamily) bool {
		return len(find(f[metric], "pod_uid="+uidBusy)) == 4
	})
	for _, want := range [][2]string{{"app", ids["app"]}, {"sidecar", ids["sidecar"]}, {ids[""], ids[""]}, {"", ""}} {
		if n := len(find(f[metric], "pod_uid="+uidBusy, "container="+want[0], "container_id="+want[1])); n != 1 {
			t.Errorf("container=%q container_id=%q: %d series, want 1", want[0], want[1], n)
		}
	}
	for _, m := range find(f[metric], "pod_uid="+uidBusy) {
		if len(m.GetLabel()) != 5 {
			t.Errorf("series with labels %v, want pod_uid, namespace, pod, container, container_id", m.GetLabel())
		}
	}
}

// placeNamed places a container as CRI-O's hook would, its name (if any) in kubelet's
// io.kubernetes.container.name annotation and its cgroup under the pod's.
func (e *env) placeNamed(t *testing.T, uid, id, name string, pid int, cgroupsPath string) {
	t.Helper()
	a := map[string]string{identity.CRIOPodUID: uid, identity.CRIOSandboxID: strings.Repeat(uid[:1], 64),
		identity.CRIOContainerType: "container", identity.CRIOPodNamespace: "shop", identity.CRIOPodName: "pod-" + uid[:4]}
	if name != "" {
		a[identity.CRIOContainerName] = name
	}
	idn, err := identity.FromAnnotations(id, a)
	if err != nil {
		t.Fatal(err)
	}
	p := lifecycle.Placement{ContainerID: id, Pid: pid, Pod: idn, Annotations: a, PodCgroup: identity.PodCgroup(idn, id, cgroupsPath)}
	if out, err := e.m.Place(p); err != nil {
		t.Fatalf("place %s: %+v, %v", id, out, err)
	}
}

// childCgroup makes a container's cgroup under the pod's, killed and removed at cleanup
// before the pod's is.
func childCgroup(t *testing.T, parent, name string) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
		err := poll.Until(10*time.Second, func() error {
			if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err // EBUSY until the killed processes are reaped
			}
			return nil
		})
		if err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	return dir
}

// hexID is a container id as containerd and CRI-O make them.
func hexID(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
