package podevents

import (
	"slices"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
)

var t0 = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

func rec(group, uid string, mod func(*registry.Record)) registry.Record {
	r := registry.Record{Group: group, Path: "mon_groups/" + group, PodUID: uid, Namespace: "team-a", PodName: "pod-" + group}
	if mod != nil {
		mod(&r)
	}
	return r
}

func pending(r *registry.Record) { r.Pending = "no free RMID: the kernel has none" }
func late(r *registry.Record)    { r.LateAssigned = true }

// reasons is what Observe returned, as "group reason outcome".
func reasons(ds []Decision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Group+" "+string(d.Reason)+" "+string(d.Outcome))
	}
	slices.Sort(out)
	return out
}

// A pod's life as the records tell it, read after read: each reason once, at its transition.
func TestTrackerTransitions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		policy config.FailurePolicy
		reads  [][]registry.Record
		want   [][]string
	}{
		{"pending then placed", config.FailOpen,
			[][]registry.Record{{rec("a", "0b9f", pending)}, {rec("a", "0b9f", pending)}, {rec("a", "0b9f", late)}, {rec("a", "0b9f", late)}},
			[][]string{{"a ResctrlMonPending "}, nil, {"a ResctrlMonPlaced "}, nil}},
		{"refused under closed, then placed", config.FailClosed,
			[][]registry.Record{{rec("a", "0b9f", pending)}, {rec("a", "0b9f", nil)}},
			[][]string{{"a ResctrlMonRefused "}, {"a ResctrlMonPlaced "}}},
		{"late-assigned, never pending", config.FailOpen,
			[][]registry.Record{{rec("a", "0b9f", nil)}, {rec("a", "0b9f", late)}, {rec("a", "0b9f", late)}},
			[][]string{nil, {"a ResctrlMonLateAssigned "}, nil}},
		{"active from the start: nothing", config.FailOpen,
			[][]registry.Record{{rec("a", "0b9f", nil)}, {rec("a", "0b9f", nil)}},
			[][]string{nil, nil}},
		{"no pod: nothing", config.FailOpen,
			[][]registry.Record{{rec("a", "", pending)}, {rec("a", "", late)}},
			[][]string{nil, nil}},
		{"pending at the first read (a restart of serve): posted again, the API server says whether it exists", config.FailOpen,
			[][]registry.Record{{rec("a", "0b9f", pending)}},
			[][]string{{"a ResctrlMonPending "}}},
		{"a pod of two groups (granularity container) is told once", config.FailOpen,
			[][]registry.Record{{rec("a", "0b9f", pending), rec("b", "0b9f", pending)}, {rec("a", "0b9f", nil), rec("b", "0b9f", nil)}},
			[][]string{{"a ResctrlMonPending "}, {"a ResctrlMonPlaced "}}},
		{"a pod whose record went and came back is a new pod", config.FailOpen,
			[][]registry.Record{{rec("a", "0b9f", pending)}, nil, {rec("a", "0b9f", pending)}},
			[][]string{{"a ResctrlMonPending "}, nil, {"a ResctrlMonPending "}}},
		{"a hostile pod name is never posted", config.FailOpen,
			[][]registry.Record{{rec("a", "0b9f", func(r *registry.Record) { pending(r); r.PodName = "../../nodes/x" })}},
			[][]string{{"a ResctrlMonPending invalid"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := NewTracker(tc.policy, 60)
			for i, recs := range tc.reads {
				got := reasons(tr.Observe(recs, t0.Add(time.Duration(i)*time.Minute)))
				if !slices.Equal(got, tc.want[i]) {
					t.Errorf("read %d: %q, want %q", i, got, tc.want[i])
				}
			}
		})
	}
}

// The node's bucket: rate Events at once, then one every minute/rate; the rest are dropped,
// never returned again. Swept over rates.
func TestTrackerNodeRate(t *testing.T) {
	t.Parallel()
	for _, rate := range []int{1, 2, 10, 60} {
		tr := NewTracker(config.FailOpen, rate)
		var recs []registry.Record
		for i := range 2 * rate {
			recs = append(recs, rec("g"+itoa(i), "e"+itoa(i), pending))
		}
		ok, limited := count(tr.Observe(recs, t0))
		if ok != rate || limited != rate {
			t.Errorf("rate %d: %d posted, %d limited at once; want %d and %d", rate, ok, limited, rate, rate)
		}
		// The dropped ones are spent: the same records again give nothing.
		if ds := tr.Observe(recs, t0.Add(time.Hour)); len(ds) != 0 {
			t.Errorf("rate %d: %d decisions for pods told already", rate, len(ds))
		}
		// One more pod a refill period later is posted; a second at the same instant is not.
		more := append(recs, rec("new1", "f1", pending), rec("new2", "f2", pending))
		ok, limited = count(tr.Observe(more, t0.Add(time.Minute/time.Duration(rate))))
		if ok != 1 || limited != 1 {
			t.Errorf("rate %d: after one refill %d posted, %d limited; want 1 and 1", rate, ok, limited)
		}
	}
}

func count(ds []Decision) (ok, limited int) {
	for _, d := range ds {
		switch d.Outcome {
		case "":
			ok++
		case RateLimited:
			limited++
		}
	}
	return ok, limited
}

// A pod's own bucket: a pod whose groups come and go cannot take the node's whole rate.
func TestTrackerPodRate(t *testing.T) {
	t.Parallel()
	tr := NewTracker(config.FailOpen, 6000)
	posted := 0
	for i := range 20 {
		// The same pod, a new group each read, pending: its record's group changes as a
		// container's would under granularity container.
		g := "g" + string(rune('a'+i))
		ok, _ := count(tr.Observe([]registry.Record{rec(g, "0b9f", pending)}, t0.Add(time.Duration(i)*time.Second)))
		posted += ok
	}
	if posted > podBurst {
		t.Errorf("one pod posted %d Events in 20 s, want at most %d", posted, podBurst)
	}
}

// The tracker forgets what is gone: its memory is bounded by the records there, and by MaxPods.
func TestTrackerBounded(t *testing.T) {
	t.Parallel()
	tr := NewTracker(config.FailOpen, 6000)
	var recs []registry.Record
	for i := range MaxPods + 10 {
		recs = append(recs, rec("g"+itoa(i), "f"+itoa(i), nil))
	}
	tr.Observe(recs, t0)
	if len(tr.groups) != MaxPods {
		t.Errorf("%d groups tracked, want MaxPods (%d)", len(tr.groups), MaxPods)
	}
	tr.Observe(recs[:3], t0)
	if len(tr.groups) != 3 || len(tr.pods) > 3 {
		t.Errorf("%d groups, %d pods tracked after all but 3 records went", len(tr.groups), len(tr.pods))
	}
}

func itoa(i int) string {
	const hex = "0123456789abcdef"
	s := ""
	for {
		s = string(hex[i%16]) + s
		if i /= 16; i == 0 {
			return s
		}
	}
}

func TestBucket(t *testing.T) {
	t.Parallel()
	var b bucket
	for i := range 3 {
		if !b.take(t0, 3, time.Second) {
			t.Fatalf("take %d of a burst of 3 refused", i)
		}
	}
	if b.take(t0, 3, time.Second) || b.take(t0.Add(999*time.Millisecond), 3, time.Second) {
		t.Error("a fourth token before a second passed")
	}
	if !b.take(t0.Add(time.Second), 3, time.Second) {
		t.Error("no token a second later")
	}
	// A clock that goes back refills nothing.
	if b.take(t0, 3, time.Second) {
		t.Error("a token from a clock that went back")
	}
	got := 0
	for range 5 {
		if b.take(t0.Add(time.Hour), 3, time.Second) {
			got++
		}
	}
	if got != 3 {
		t.Errorf("an hour later: %d tokens, want the burst of 3 back, no more", got)
	}
}
