package inventory

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
)

// ErrNoSuchPod: no owned group is of the pod asked for.
var ErrNoSuchPod = errors.New("no group of that pod on this node")

// PodStatus is one pod's group as `resctrl-mon status --pod` shows it: the group with its
// tasks and counters, the lives the snapshot directory keeps of it, and the failures the
// state dir recorded about it.
type PodStatus struct {
	Pod      Pod                `json:"pod"`
	Lives    []Life             `json:"lives"`    // oldest first; never null
	Failures []registry.Failure `json:"failures"` // the state dir's (two logs' worth); never null
}

// Life is one life of the pod's group as its snapshots say: when it began, and whether its
// end was written (the group ended, its totals final).
type Life struct {
	Began time.Time `json:"began"`
	Ended bool      `json:"ended"`
}

// PodStatus finds the pod's group by the pod's UID, or by "namespace/name" (a pod of that
// name now; a pod re-made under the same name is another UID, another group), and reads
// it whole. snapshotDir "" reads no lives.
func (inv *Inventory) PodStatus(pod, snapshotDir string) (PodStatus, error) {
	// The records alone to find it: only its group's tasks and counters are read.
	pods, err := inv.Pods(Options{})
	i := slices.IndexFunc(pods, func(p Pod) bool {
		return pod != "" && (p.PodUID == pod || p.Group == pod || (p.PodName != "" && p.Namespace+"/"+p.PodName == pod))
	})
	if i < 0 {
		return PodStatus{}, errors.Join(fmt.Errorf("%w: %q (a pod's UID, or namespace/name)", ErrNoSuchPod, pod), err)
	}
	st := PodStatus{Pod: pods[i], Lives: []Life{}, Failures: []registry.Failure{}}
	errs := []error{err}
	if a := addrOf(st.Pod); inv.view.Exists(a) {
		errs = append(errs, inv.read(&st.Pod, a, Options{Tasks: true, Counters: true}))
	}
	if snapshotDir != "" {
		names, err := snapshot.List(snapshotDir)
		errs = append(errs, err)
		st.Lives = lives(names, st.Pod.Group)
	}
	fails, err := inv.store.Failures(time.Time{})
	errs = append(errs, err)
	ids := map[string]bool{st.Pod.Group: true, st.Pod.PodUID: true}
	for _, c := range st.Pod.Containers {
		ids[c.ID] = true
	}
	for _, f := range fails {
		if (f.Pod != "" && ids[f.Pod]) || ids[f.Subject] {
			st.Failures = append(st.Failures, f)
		}
	}
	return st, errors.Join(errs...)
}

// lives pairs a group's snapshot names (List's order: by life, .begin before .end) into
// lives; a version 1 name (no life) says nothing of when.
func lives(names []snapshot.Name, group string) []Life {
	out := []Life{}
	for _, n := range names {
		if n.Group != group || n.Life.IsZero() {
			continue
		}
		if len(out) == 0 || !out[len(out)-1].Began.Equal(n.Life) {
			out = append(out, Life{Began: n.Life})
		}
		if n.Kind == snapshot.End {
			out[len(out)-1].Ended = true
		}
	}
	return out
}
