// Package budget is the one way the front ends (the OCI hook, the runtime wrapper, the NRI
// adapter) run work against a deadline. A runtime waits on each of them with a timeout of
// its own, and past it the runtime kills the hook, drops the plugin or fails the container
// whatever the failure policy: so each front end stops waiting at its budget, answers, and
// leaves the work to finish in the background (what it changes is recorded before any
// resctrl call, so a later event, the worker or reconcile completes it).
//
//   - ErrExhausted is the one error of a budget that ran out; ErrNotStarted wraps it for work
//     refused because every worker of a Pool is busy.
//   - Run hands work to a goroutine, or to a Pool's bounded workers, and waits for it until
//     its budget runs out: done, running on, or not started.
//   - A Budget is a span counted from when the runtime started waiting; its Tail is kept
//     back from the work, for what must still happen once the wait is over (marking a pod
//     late, the log lines). Under fits a budget under a caller's own timeout.
package budget
