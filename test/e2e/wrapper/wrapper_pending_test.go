package wrapper_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestWrapperExecPendingClosed: a pod left pending (no RMID: it runs, unplaced) gets its
// execs under failurePolicy closed, through the wrapper and real runc: an exec into a running
// pod is no new start to refuse (its exec probes would fail and kubelet restart it in a
// loop). Each is logged as pending and counted.
func TestWrapperExecPendingClosed(t *testing.T) {
	t.Parallel()
	// One RMID, the root group's: every pod is pending.
	e := e2e.NewHookEnv(t, resctrlsim.Options{NumRMIDs: 1}, "")
	w := newWrapped(t, e, "")
	b := e.PlainBundle(e2e.CRIOPod(e2e.PodUIDB, e2e.SandboxOf('b'), "app"), "sleep", "600")
	if err := w.wrapper.Run("c1", b); err != nil {
		t.Fatalf("fail-open: the container did not start: %v\n%s", err, e.Log())
	}
	t.Cleanup(func() { _ = w.wrapper.Delete("c1", true) })
	if rec := e.ReadRecordFile(e2e.PodUIDB); rec["pending"] == nil {
		t.Fatalf("pod B is not recorded as pending: %v\n%s", rec, e.Log())
	}
	e.Config(fmt.Sprintf("runtime: %s\nruntimeHook: %s\nfailurePolicy: closed\n", w.plain.Bin, e2e.Binaries.Hook))
	for range 2 {
		stdout, stderr, err := w.wrapper.Command("exec", "c1", "echo", "probe-ok")
		if err != nil || !strings.Contains(string(stdout), "probe-ok") {
			t.Fatalf("fail-closed: the exec into the pending pod did not run: %v, stdout %q, stderr %q\n%s", err, stdout, stderr, e.Log())
		}
	}
	if n := e.LogLines("prog=resctrl-mon-runtime", "command=exec", "container=c1", "action=pending"); n != 2 {
		t.Errorf("the log has %d lines of execs into the pending pod, want 2:\n%s", n, e.Log())
	}
	st, err := registry.OpenReadOnly(e.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	if counts, err := st.Counts(); err != nil || counts["wrapper.pending"] != 2 {
		t.Errorf("counts %v (%v), want wrapper.pending 2", counts, err)
	}
	if _, err := os.Stat(filepath.Join(e.Sim.Dir, "mon_groups", e2e.PodUIDB)); err == nil {
		t.Errorf("pod B has a group although no RMID was free")
	}
}
