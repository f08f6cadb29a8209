package podevents

import (
	"errors"
	"fmt"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/clip"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/kubeapi"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
)

// Event is one Event to post about a pod.
type Event struct {
	Pod     kubeapi.PodRef
	Group   string // the record's group, for the log
	Reason  Reason
	Message string
}

// MaxPods bounds the pods the tracker remembers: a record per pod is at most one per RMID
// plus the pending ones, and a node runs a few hundred pods; past it, new pods get no Event
// (counted as rate_limited) until some are gone.
const MaxPods = 10000

// Tracker turns what the records say, read after read, into the Events to post: each pod
// and reason once, as its state changes. It remembers a little per group whose record is
// there, and forgets a group when its record goes.
type Tracker struct {
	policy config.FailurePolicy
	rate   int // the node's Events a minute (and its burst)
	node   bucket
	groups map[string]*seen
	// pods keys what was told by pod UID: a pod of several groups (granularity container)
	// is told each reason once.
	pods map[string]*told
}

// told is what a pod was told, and by how many of the groups tracked.
type told struct {
	reasons map[Reason]bool
	groups  int
}

// seen is what the tracker knows of one group.
type seen struct {
	uid        string
	wasPending bool // seen pending by this process
	bucket     bucket
}

// NewTracker is a tracker for a node whose config says policy, posting at most rate Events a
// minute (a burst of as many).
func NewTracker(policy config.FailurePolicy, rate int) *Tracker {
	return &Tracker{policy: policy, rate: max(rate, 1), groups: map[string]*seen{}, pods: map[string]*told{}}
}

// Decision is an Event and whether the buckets let it be posted.
type Decision struct {
	Event
	Outcome Outcome // "" to post; RateLimited or Invalid when it is not
}

// Observe compares the records (every record of the state dir, as registry.List returns
// them) with what was seen before and returns the Events due at now. Each returned Event is
// spent: it is not returned again, whatever comes of its post (best effort, no retry).
func (t *Tracker) Observe(recs []registry.Record, now time.Time) []Decision {
	var out []Decision
	here := map[string]bool{}
	for _, r := range recs {
		if r.PodUID == "" {
			continue // a container with no pod: nothing in Kubernetes to tell
		}
		here[r.Group] = true
		s := t.groups[r.Group]
		if s == nil {
			if len(t.groups) >= MaxPods {
				continue
			}
			s = &seen{uid: r.PodUID}
			t.groups[r.Group] = s
			p := t.pods[r.PodUID]
			if p == nil {
				p = &told{reasons: map[Reason]bool{}}
				t.pods[r.PodUID] = p
			}
			p.groups++
		}
		for _, e := range t.due(r, s) {
			d := Decision{Event: e}
			t.pods[s.uid].reasons[e.Reason] = true
			switch {
			case ValidPod(e.Pod) != nil:
				d.Outcome = Invalid
			case !s.bucket.take(now, podBurst, podEvery) || !t.node.take(now, t.rate, time.Minute/time.Duration(t.rate)):
				d.Outcome = RateLimited
			}
			out = append(out, d)
		}
	}
	for g, s := range t.groups {
		if !here[g] {
			delete(t.groups, g)
			p := t.pods[s.uid]
			if p.groups--; p.groups == 0 {
				delete(t.pods, s.uid)
			}
		}
	}
	return out
}

// due is the Events r's state calls for that were not returned yet.
func (t *Tracker) due(r registry.Record, s *seen) []Event {
	done := t.pods[s.uid].reasons
	pod := kubeapi.PodRef{Namespace: r.Namespace, Name: r.PodName, UID: r.PodUID}
	ev := func(reason Reason, format string, args ...any) Event {
		return Event{Pod: pod, Group: r.Group, Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	var out []Event
	switch {
	case r.Pending != "":
		s.wasPending = true
		why := clip.String(r.Pending)
		// A pending pod is a failed placement of each container it starts: the policy's
		// decision on that says whether they wait (refused) or run unplaced.
		if t.policy.Decide(config.Call{Err: errors.New(r.Pending), Starts: true}) == config.Refuse {
			if !done[Refused] {
				out = append(out, ev(Refused, "resctrl-mon could not give the pod a monitoring group, and failurePolicy closed keeps its containers from starting until it can: %s", why))
			}
		} else if !done[Pending] {
			out = append(out, ev(Pending, "the pod runs without a monitoring group, so its cache and memory bandwidth use is not counted, until one is free: %s", why))
		}
	case s.wasPending:
		if !done[Placed] {
			out = append(out, ev(Placed, "the pod has its monitoring group (%s) after being pending: its counters start now, what it did before is not counted", r.Path))
		}
	case r.LateAssigned:
		if !done[LateAssigned] {
			out = append(out, ev(LateAssigned, "some of the pod's tasks were placed in its monitoring group (%s) after they had started: what they did before is not counted, its counters are a lower bound", r.Path))
		}
	}
	return out
}
