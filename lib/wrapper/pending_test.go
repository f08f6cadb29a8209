package wrapper

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// pendingPod records container id in a pod that is pending (no free RMID: the record and
// the binding are there, the group is not), as lifecycle leaves it.
func pendingPod(t *testing.T, stateDir, id string) {
	t.Helper()
	st, err := registry.Open(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	const group = "0b1c2d3e-0000-4000-8000-000000000001"
	err = st.Update(group, time.Second, func(tx *registry.Tx) error {
		tx.Rec = registry.Record{Group: group, Path: "mon_groups/" + group, Created: time.Now(),
			Containers: map[string]time.Time{id: time.Now()},
			Pending:    "no free RMID for mon_groups/" + group + ": Out of RMIDs"}
		return tx.Save()
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.BindContainer(id, group); err != nil {
		t.Fatal(err)
	}
}

// An exec into a pod that is pending (it runs, unplaced, waiting for an RMID) is no new
// start to refuse: it runs under either policy, is logged as pending, and is counted.
func TestPrepareExecIntoPendingPod(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	for _, policy := range []string{"open", "closed"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			rt := fakeRuntime(t)
			environ, dir := env(t, rt, "failurePolicy: "+policy+"\nresctrlRoot: "+sim.Dir+"\nresctrlSimulator: true\n")
			stateDir := filepath.Join(dir, "state")
			pendingPod(t, stateDir, "c1")
			var stderr bytes.Buffer
			if _, err := Prepare([]string{"runc", "exec", "c1", "true"}, environ, os.Getpid(), &stderr); err != nil {
				t.Fatalf("exec into a pending pod refused: %v (stderr %q)", err, stderr.String())
			}
			b, _ := os.ReadFile(filepath.Join(dir, "log"))
			if !strings.Contains(string(b), "command=exec") || !strings.Contains(string(b), "action=pending") {
				t.Errorf("the log does not say the exec went into a pending pod: %s", b)
			}
			st, err := registry.OpenReadOnly(stateDir)
			if err != nil {
				t.Fatal(err)
			}
			counts, err := st.Counts()
			if err != nil {
				t.Fatal(err)
			}
			if counts[execPendingCount] != 1 {
				t.Errorf("counts %v, want %s 1", counts, execPendingCount)
			}
		})
	}
}

// A flag the wrapper does not know never stops a create or an exec, under either policy:
// the runtime gets the line unchanged, and the log names the flag. Where the line reads one
// way only, the wrapper does its part; where it reads two ways, nothing of its own.
func TestPrepareUnknownFlagNeverRefuses(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"open", "closed"} {
		for _, tc := range []struct {
			args   string // split on spaces; B is the bundle
			action string
		}{
			{"create --future x --bundle B c1", "hooks-added"},
			{"create --future --bundle=B c1", "skipped"},
			{"exec --future x c1 true", "skipped"},
			{"--future v run c1", "skipped"},
		} {
			t.Run(policy+" "+tc.args, func(t *testing.T) {
				t.Parallel()
				rt := fakeRuntime(t)
				environ, dir := env(t, rt, "failurePolicy: "+policy+"\n")
				bundle := filepath.Join(dir, "b")
				if err := os.Mkdir(bundle, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(bundle, "config.json"), []byte("{}"), 0o644); err != nil {
					t.Fatal(err)
				}
				args := append([]string{"runc"}, strings.Fields(strings.ReplaceAll(tc.args, "B", bundle))...)
				var stderr bytes.Buffer
				x, err := Prepare(args, environ, os.Getpid(), &stderr)
				if err != nil {
					t.Fatalf("refused: %v (stderr %q)", err, stderr.String())
				}
				if !slices.Equal(x.Argv[1:], args[1:]) {
					t.Errorf("the runtime gets %q, want %q", x.Argv[1:], args[1:])
				}
				b, _ := os.ReadFile(filepath.Join(dir, "log"))
				if !strings.Contains(string(b), "--future") || !strings.Contains(string(b), "action="+tc.action) {
					t.Errorf("the log does not say action=%s naming the flag: %s", tc.action, b)
				}
			})
		}
	}
}

// The count's name is the one lifecycle gives every outcome, so status and the exporter
// read it as they read the hook's.
func TestExecPendingCountName(t *testing.T) {
	t.Parallel()
	if want := vocab.OutcomeCount(vocab.Source("wrapper"), vocab.Pending); execPendingCount != want {
		t.Errorf("execPendingCount = %q, lifecycle names it %q", execPendingCount, want)
	}
}
