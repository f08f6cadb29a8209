// Package podevents tells a pod's owner, as Kubernetes Events on the Pod, what resctrl-mon
// could not do for it: `kubectl describe pod` is where an owner looks, and the exporter's
// metrics are the operator's.
//
// The Events are posted by `serve`, the exporter's long-running process on the node, from
// what the state dir's records say (read-only, every PollEvery): never by the hook, the NRI
// adapter or reconcile, so no placement ever waits on the API server. Each is posted once per
// pod and reason, under a name made of both (kubeapi.EventName): a restarted `serve` that
// posts it again is answered 409 and counts it as "exists". Posting is best effort: a refusal
// or an error is logged and counted (resctrl_mon_events_posted_total{reason,outcome}), and
// never retried, so an API server that refuses costs one request per Event; a token bucket
// for the node and one for each pod bound how many are posted when many pods change at once.
package podevents

import "time"

// Reason is an Event's reason, as `kubectl describe pod` shows it. One list, in Reasons.
type Reason string

const (
	// Pending: the pod runs without a monitoring group (no free RMID): nothing it does is
	// counted until one frees and it is placed.
	Pending Reason = "ResctrlMonPending"
	// Refused: as Pending, under failurePolicy closed, where the pod's containers are not
	// started until it has its group.
	Refused Reason = "ResctrlMonRefused"
	// LateAssigned: (some of) the pod's tasks were placed after they had started: what they
	// did before is counted elsewhere, its counters are a lower bound.
	LateAssigned Reason = "ResctrlMonLateAssigned"
	// Placed: a pod seen pending got its group.
	Placed Reason = "ResctrlMonPlaced"
)

// Reasons lists every Reason.
var Reasons = []Reason{Pending, Refused, LateAssigned, Placed}

// Type is the Event's type: Normal for Placed, Warning for the others.
func (r Reason) Type() string {
	if r == Placed {
		return "Normal"
	}
	return "Warning"
}

// Outcome is what came of one Event. One list, in Outcomes.
type Outcome string

const (
	Posted      Outcome = "posted"       // the API server created it
	Exists      Outcome = "exists"       // posted before (a restart of serve): 409
	RateLimited Outcome = "rate_limited" // the node's or the pod's bucket was empty: dropped
	Failed      Outcome = "failed"       // the API server refused it, or did not answer
	Invalid     Outcome = "invalid"      // the record's pod namespace, name or UID is not one Kubernetes has
)

// Outcomes lists every Outcome.
var Outcomes = []Outcome{Posted, Exists, RateLimited, Failed, Invalid}

// PollEvery is how often the records are read: an Event a few seconds after the fact is on
// time for a person, and a read of every record costs what one scrape does.
const PollEvery = 5 * time.Second
