package config

import (
	"fmt"
	"log/slog"
)

// FailurePolicy says whether a container may start when it could not be placed. Every front
// end (the hook, the NRI adapter, the runtime wrapper) applies it through Decide, and only
// there.
type FailurePolicy string

const (
	FailOpen   FailurePolicy = "open"   // start it, log, record the pod as pending (default)
	FailClosed FailurePolicy = "closed" // refuse to start it, saying why
)

// Call is a front end's call as the failure policy sees it: what it failed with, and where
// the front end stands. The fields are the situations in which the front ends differ; a
// front end says which is its own, and Decide alone draws the consequence.
type Call struct {
	// Err is what failed; nil when nothing did. A pending pod (no free RMID) is a failure
	// of a call that starts a container, as is running out of the time budget.
	Err error
	// Starts: the runtime starts a container, or a process in one, only once this call
	// succeeds: the hook's createRuntime, the adapter's StartContainer, the wrapper's create,
	// run and exec. Any other call (poststop, PostStartContainer, a departure) comes when the
	// container runs already or is ending: failing it would stop nothing, and runtimes only
	// warn about a failed poststop anyway.
	Starts bool
	// Unreadable: the front end could not read for sure what the runtime was asked to do
	// (the wrapper, given a flag neither runc nor crun has). The runtime knows its own flags;
	// refusing would stop every create and exec of an engine that passes such a flag, exec
	// probes and all, for want of a table entry. What was asked runs, unplaced.
	Unreadable bool
}

// Verdict is what a front end does with a call's outcome.
type Verdict int

const (
	// Proceed: nothing failed; the call is logged at info and the runtime goes on.
	Proceed Verdict = iota
	// LetRun: the call failed and what it starts starts all the same (fail-open): the
	// failure is logged as an error, and the runtime goes on.
	LetRun
	// Refuse: the call failed and the container or process does not start (fail-closed):
	// the failure is logged as an error, and the front end fails the runtime's call with
	// Refusal's message, which the runtime shows.
	Refuse
)

// String is the verdict's name in tests and messages.
func (v Verdict) String() string {
	switch v {
	case Proceed:
		return "proceed"
	case LetRun:
		return "let-run"
	case Refuse:
		return "refuse"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Level is the level of the front end's log line for the call: a failure is an error
// whatever the policy makes of it, so an operator of a fail-open node sees it too. What the
// call did is counted as it is (failed, pending, refused) under either policy: the counts
// say what happened to the pod, the verdict only whether its container started.
func (v Verdict) Level() slog.Level {
	if v == Proceed {
		return slog.LevelInfo
	}
	return slog.LevelError
}

// Decide is what a front end does about c under the policy p: the one place the policy is
// applied. A failed call is refused only under FailClosed, only where it starts something,
// and never when the front end could not read what that is.
func (p FailurePolicy) Decide(c Call) Verdict {
	switch {
	case c.Err == nil:
		return Proceed
	case p == FailClosed && c.Starts && !c.Unreadable:
		return Refuse
	}
	return LetRun
}

// Refusal is the error a front end fails the runtime's call with when Decide says Refuse:
// what did not start (say "resctrl-mon: container ID not started"), the policy that stopped
// it, and why.
func Refusal(what string, err error) error {
	return fmt.Errorf("%s (failurePolicy: %s): %w", what, FailClosed, err)
}
