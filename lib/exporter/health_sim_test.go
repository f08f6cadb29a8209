package exporter_test

import (
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestHealthSaysWhyAWriteWasRefused: a write the kernel refuses (here the simulator's
// mkdir answering EACCES, or a tasks write answering EPERM, as an LSM or resctrl's owner
// rule would) turns /healthz to 503 naming the path and the likely cause, as it reaches the
// exporter in mode nri: through the failures another process recorded.
func TestHealthSaysWhyAWriteWasRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		op    resctrlsim.Op
		errno syscall.Errno
		want  []string
	}{
		{"EACCES on mkdir", resctrlsim.OpMkdir, syscall.EACCES, []string{"permission denied", "[lsm", "an LSM", "SELinux", "mon_groups/" + uidBusy}},
		{"EPERM on tasks", resctrlsim.OpTasksWrite, syscall.EPERM, []string{"operation not permitted", "task-owner", "hostUsers", "tasks"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			n := serveNode(t, e.cfg, exporter.NodeOptions{}, t.Logf)
			url := "http://" + n.Addr().String() + "/healthz"
			if code, body := healthz(t, url); code != http.StatusOK {
				t.Fatalf("before any refusal: %d %s", code, body)
			}
			e.sim.FailNext(c.op, 100, c.errno)
			pid := proctest.Start(t, proctest.Sleep)
			if _, err := e.m.Place(placement(t, uidBusy, "busy", pid)); err == nil {
				t.Fatalf("placed despite the refusal")
			}
			code, body := healthz(t, url)
			if code != http.StatusServiceUnavailable {
				t.Fatalf("after a refused write: %d %s", code, body)
			}
			for _, w := range c.want {
				if !strings.Contains(body, w) {
					t.Errorf("/healthz lacks %q: %s", w, body)
				}
			}
		})
	}
}

func healthz(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// placement is what env.place places, for a placement expected to fail.
func placement(t *testing.T, uid, id string, pid int) lifecycle.Placement {
	t.Helper()
	a := map[string]string{identity.CRIOPodUID: uid, identity.CRIOSandboxID: strings.Repeat(uid[:1], 64),
		identity.CRIOContainerType: "container", identity.CRIOPodNamespace: "shop", identity.CRIOPodName: "pod-" + uid[:4]}
	idn, err := identity.FromAnnotations(id, a)
	if err != nil {
		t.Fatal(err)
	}
	return lifecycle.Placement{ContainerID: id, Pid: pid, Pod: idn, Annotations: a, PodCgroup: identity.PodCgroup(idn, id, "")}
}
