package config

import (
	"errors"
	"log/slog"
	"testing"
)

// Every front end's calls, as each describes its own situation to Decide, and what either
// policy makes of them: the whole of the failure policy, the front ends' exceptions included.
func TestFailurePolicyDecide(t *testing.T) {
	t.Parallel()
	failed := errors.New("Out of RMIDs")
	for _, tc := range []struct {
		name         string
		call         Call
		open, closed Verdict
	}{
		// The hook: only createRuntime starts a container.
		{"hook createRuntime placed", Call{Starts: true}, Proceed, Proceed},
		{"hook createRuntime failed", Call{Err: failed, Starts: true}, LetRun, Refuse},
		{"hook createRuntime pending (no free RMID)", Call{Err: failed, Starts: true}, LetRun, Refuse},
		{"hook createRuntime past hookBudget", Call{Err: errors.New("budget exhausted"), Starts: true}, LetRun, Refuse},
		{"hook createRuntime with a config that cannot be loaded", Call{Err: errors.New("config: bad key"), Starts: true}, LetRun, Refuse},
		{"hook poststop failed", Call{Err: failed}, LetRun, LetRun},
		{"hook poststop left", Call{}, Proceed, Proceed},
		{"hook at an unknown stage", Call{Err: errors.New("unknown stage")}, LetRun, LetRun},
		// The adapter: only StartContainer starts a container; PostStartContainer places one
		// that runs already (late).
		{"adapter StartContainer placed", Call{Starts: true}, Proceed, Proceed},
		{"adapter StartContainer failed", Call{Err: failed, Starts: true}, LetRun, Refuse},
		{"adapter StartContainer not started (every worker busy)", Call{Err: errors.New("not started"), Starts: true}, LetRun, Refuse},
		{"adapter PostStartContainer failed", Call{Err: failed}, LetRun, LetRun},
		// The wrapper: create, run and exec start something; a command line it cannot read
		// for sure is never refused.
		{"wrapper create, hooks added", Call{Starts: true}, Proceed, Proceed},
		{"wrapper create, hooks not added", Call{Err: failed, Starts: true}, LetRun, Refuse},
		{"wrapper exec joined", Call{Starts: true}, Proceed, Proceed},
		{"wrapper exec failed to join", Call{Err: failed, Starts: true}, LetRun, Refuse},
		{"wrapper exec into a pending pod (not a failure: it runs, counted)", Call{Starts: true}, Proceed, Proceed},
		{"wrapper command line unreadable", Call{Err: failed, Starts: true, Unreadable: true}, LetRun, LetRun},
		{"wrapper command line unreadable, nothing else failed", Call{Starts: true, Unreadable: true}, Proceed, Proceed},
	} {
		for _, c := range []struct {
			p    FailurePolicy
			want Verdict
		}{{FailOpen, tc.open}, {FailClosed, tc.closed}, {"", tc.open}} {
			if got := c.p.Decide(tc.call); got != c.want {
				t.Errorf("%s under %q: %s, want %s", tc.name, c.p, got, c.want)
			}
		}
	}
}

// A failure is logged as an error whether or not the container runs; only a call that did
// not fail is logged at info.
func TestVerdictLevel(t *testing.T) {
	t.Parallel()
	for v, want := range map[Verdict]slog.Level{Proceed: slog.LevelInfo, LetRun: slog.LevelError, Refuse: slog.LevelError} {
		if got := v.Level(); got != want {
			t.Errorf("%s: level %s, want %s", v, got, want)
		}
	}
}

// The refusal the runtime shows names what did not start and the policy, and keeps the
// cause for errors.Is.
func TestRefusal(t *testing.T) {
	t.Parallel()
	cause := errors.New("Out of RMIDs")
	err := Refusal("resctrl-mon: container c1 not started", cause)
	if want := "resctrl-mon: container c1 not started (failurePolicy: closed): Out of RMIDs"; err.Error() != want {
		t.Errorf("%q, want %q", err, want)
	}
	if !errors.Is(err, cause) {
		t.Errorf("%v does not wrap its cause", err)
	}
}
