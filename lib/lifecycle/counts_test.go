package lifecycle

import (
	"errors"
	"maps"
	"os"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// Every outcome a front end gets is counted once under its source, refusals and failures
// included, so the exporter can serve them; snapshots are counted by kind.
func TestOutcomesAreCountedBySource(t *testing.T) {
	t.Parallel()
	e := newEnv(t, bareFake(1), withConfig(func(c *config.Config) {
		c.Retention = config.Duration(time.Minute)
		c.SnapshotDir = t.TempDir()
	}))
	fake := e.fake
	fake.ForgetTasks() // the containers' processes are this test's own
	e.m.CountAs(vocab.SourceHook)
	pid, b1 := os.Getpid(), e.proc()
	steps := []struct {
		do    func() (Outcome, error)
		want  vocab.Action
		again bool // a repeat, which says what it found but counts nothing
	}{
		{func() (Outcome, error) { return e.create("c1", pid, crio(podA, sbA)) }, vocab.Created, false},
		{func() (Outcome, error) { return e.create("c2", pid, crio(podA, sbA)) }, vocab.Joined, false},
		{func() (Outcome, error) { return e.create("c3", pid, crio(podA, sbB)) }, vocab.Refused, false},        // another live sandbox
		{func() (Outcome, error) { return e.place("c4", pid, crio(podA, sbA), "gold") }, vocab.Refused, false}, // another class
		{func() (Outcome, error) { return e.create("b1", b1, fakeCrio(podB)) }, vocab.Pending, false},          // the one RMID is podA's
		{func() (Outcome, error) { return e.create("c5", -1, crio(podA, sbA)) }, vocab.Failed, false},          // bad input
		{func() (Outcome, error) { return Outcome{}, e.m.Refuse("c6", errors.New("no pod uid")) }, vocab.Refused, false},
		{func() (Outcome, error) { return e.stop("c1", crio(podA, sbA)), nil }, vocab.Left, false},
		{func() (Outcome, error) { return e.stop("c1", crio(podA, sbA)), nil }, vocab.Left, true}, // NRI's RemoveContainer after StopContainer
		{func() (Outcome, error) { return e.stop("c2", crio(podA, sbA)), nil }, vocab.Idle, false},
		{func() (Outcome, error) { return e.m.EndPod(PodEnd{PodUID: podA}) }, vocab.Removed, false},
	}
	want := map[string]uint64{}
	for i, s := range steps {
		out, err := s.do()
		if got := ActionOf(out, err); got != s.want {
			t.Fatalf("step %d: %s (%+v, %v), want %s", i, got, out, err, s.want)
		}
		if !s.again {
			want["hook."+string(s.want)]++
		}
	}
	want["snapshot.begin"], want["snapshot.end"] = 1, 1
	// Every failure recorded is counted by its reason, as the log holds it.
	fails, err := e.m.Store().Failures(time.Time{})
	if err != nil || len(fails) == 0 {
		t.Fatalf("failures: %v, %v", fails, err)
	}
	for _, f := range fails {
		want[vocab.FailureCount(vocab.FailureReason(f.Reason))]++
	}
	got, err := e.m.Store().Counts()
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Errorf("counts\n got %v\nwant %v", got, want)
	}

	// Reconcile counts its steps under its own source, and a dry run counts nothing: the
	// pending pod's container died without a departure, so its pod goes idle.
	crash(t, b1)
	e.m.CountAs(vocab.SourceReconcile)
	if _, err := e.m.Reconcile(nil, ReconcileOptions{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Reconcile(nil, ReconcileOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ = e.m.Store().Counts()
	want["reconcile.idle"] = 1
	if !maps.Equal(got, want) {
		t.Errorf("after reconcile\n got %v\nwant %v", got, want)
	}
}
