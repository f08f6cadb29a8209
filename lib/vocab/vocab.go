// Package vocab holds the words resctrl-mon's front ends say and its read side reads: what a
// call did (Action), which front end did it (Source), why a failure was recorded
// (FailureReason), and the names the state dir counts them under. The writers (lifecycle, the
// hook, the adapter, the wrapper) and the readers (the exporter, status, the docs' generator)
// import this package, so the read side needs nothing of the write side. The pod states a
// group is in are the inventory's, which derives them from the records.
package vocab

import "github.com/resctrl-mon/resctrl-mon/lib/snapshot"

// Action is what a call did to a container, a pod or a group: the hook's log "outcome",
// reconcile's actions, a metric label. One list, in Actions.
type Action string

const (
	Created   Action = "created"   // the pod's group was made (one RMID) and the container placed in it
	Joined    Action = "joined"    // the container was placed in its pod's existing group
	Skipped   Action = "skipped"   // not monitored (filters, no pod with noPod: skip, a pod's sandbox); Detail says why
	Pending   Action = "pending"   // no free RMID: the pod is recorded and completed later
	Refused   Action = "refused"   // identity that does not add up, a foreign group, a class conflict
	Failed    Action = "failed"    // anything else that went wrong; the error says what
	Left      Action = "left"      // a container left its pod's group; others remain
	Idle      Action = "idle"      // the pod's last container left: the group is kept for the retention window
	Removed   Action = "removed"   // the group was removed (its .end snapshot written first)
	Reclaimed Action = "reclaimed" // an idle group was removed before its retention ended (its .end written first): a new pod needed its RMID
	Kept      Action = "kept"      // the group could not be removed yet (live tasks, a failed rmdir, a newer sandbox of the pod); retried
	Completed Action = "completed" // a pending pod got its group (reconcile, the sweep) and its containers were placed
	Recreated Action = "recreated" // reconcile re-made a group that had disappeared
	Adopted   Action = "adopted"   // reconcile --adopt rebuilt a lost record for a group that holds its pod's tasks
	Moved     Action = "moved"     // reconcile moved tasks that were outside their pod's group
	Busy      Action = "busy"      // reconcile left a pod whose lock a hook holds to the next run
)

// Actions lists every Action, in the order docs/reference/actions.md documents them.
var Actions = []Action{Created, Joined, Skipped, Pending, Refused, Failed, Left, Idle, Removed, Reclaimed, Kept,
	Completed, Recreated, Adopted, Moved, Busy}

// Source is the front end a Manager works for; what it does is counted under it (the
// exporter's resctrl_mon_outcomes_total{source,action}).
type Source string

const (
	SourceHook      Source = "hook"      // the OCI createRuntime/poststop hook
	SourceAdapter   Source = "adapter"   // the NRI adapter
	SourceReconcile Source = "reconcile" // the reconcile command
	SourceWrapper   Source = "wrapper"   // resctrl-mon-runtime: execs into pending pods (it counts nothing else)
	SourceOther     Source = "other"     // a Manager no front end named
)

// Sources lists every Source.
var Sources = []Source{SourceHook, SourceAdapter, SourceReconcile, SourceWrapper, SourceOther}

// OutcomeCount names the state dir's count of an action by a source.
func OutcomeCount(s Source, a Action) string { return string(s) + "." + string(a) }

// SnapshotCount names the state dir's count of snapshots written of a kind.
func SnapshotCount(k snapshot.Kind) string { return "snapshot." + string(k) }

// FailureReason is why a failure was recorded in the state dir (status counts them).
type FailureReason string

const (
	FailIdentity FailureReason = "identity" // the pod identity was refused
	FailCreate   FailureReason = "create"   // the group could not be made (no RMID, a foreign group, ...)
	FailAssign   FailureReason = "assign"   // the container's threads could not be moved
	FailRemove   FailureReason = "remove"   // the group could not be removed
	FailSnapshot FailureReason = "snapshot" // a snapshot could not be written
	// FailAnnotation: a pod-set annotation ignored in the pod's namespace
	// (annotations.optOutNamespaces, mbmAssignmentNamespaces); the container was placed.
	FailAnnotation FailureReason = "annotation"
)

// FailureCount names the state dir's count of failures recorded for a reason: failures are
// counted as outcomes are, the log (status's recent failures) being bounded and rotated.
func FailureCount(r FailureReason) string { return FailurePrefix + string(r) }

// FailurePrefix starts the name of every failure count.
const FailurePrefix = "failure."

// FailureReasons lists every FailureReason.
var FailureReasons = []FailureReason{FailIdentity, FailCreate, FailAssign, FailRemove, FailSnapshot, FailAnnotation}
