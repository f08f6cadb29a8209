package mbmpolicy

import (
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	t0     = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	events = []string{"mbm_total_bytes", "mbm_local_bytes"}
	hold   = 5 * time.Minute
)

// g is a live group holding both counters of domain 0 when since is not zero.
func g(path string, occ uint64, since time.Duration, opts ...func(*Group)) Group {
	gr := Group{Path: path, Live: true, Occupancy: map[string]uint64{"0": occ}}
	if since != 0 {
		gr.Assigned = map[string][]string{"0": events}
		gr.Since = map[string]time.Time{"0": t0.Add(-since)}
	}
	for _, o := range opts {
		o(&gr)
	}
	return gr
}

func wanted(g *Group) { g.Wanted = true }
func idle(g *Group)   { g.Live = false }
func onlyTotal(g *Group) {
	g.Assigned = map[string][]string{"0": {"mbm_total_bytes"}}
}

// lines writes a plan as "path mbm_x:0=e", total only (each group's local write mirrors it).
func lines(ws []Write) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Path+" "+w.Line())
	}
	return out
}

func TestPlan(t *testing.T) {
	t.Parallel()
	long := time.Hour // held past the hold time
	for _, tc := range []struct {
		name   string
		groups []Group
		free   int
		want   []string
	}{
		{"free counters go to the busiest", []Group{g("a", 10, 0), g("b", 30, 0), g("c", 20, 0)}, 4,
			[]string{"b mbm_total_bytes:0=e", "b mbm_local_bytes:0=e", "c mbm_total_bytes:0=e", "c mbm_local_bytes:0=e"}},
		{"a pod that asks comes before a busier one", []Group{g("a", 10, 0, wanted), g("b", 30, 0)}, 2,
			[]string{"a mbm_total_bytes:0=e", "a mbm_local_bytes:0=e"}},
		{"winners unchanged: nothing written", []Group{g("a", 30, long), g("b", 20, long), g("c", 10, 0)}, 0, nil},
		{"a busier pod takes a counter held past the hold time", []Group{g("a", 10, long), g("b", 30, 0)}, 0,
			[]string{"a mbm_total_bytes:0=_", "a mbm_local_bytes:0=_", "b mbm_total_bytes:0=e", "b mbm_local_bytes:0=e"}},
		{"not within the hold time", []Group{g("a", 10, time.Minute), g("b", 30, 0)}, 0, nil},
		{"a pod that asks waits for the hold time too", []Group{g("a", 10, time.Minute), g("b", 30, 0, wanted)}, 0, nil},
		{"a pod that asks takes from one that did not", []Group{g("a", 100, long), g("b", 1, 0, wanted)}, 0,
			[]string{"a mbm_total_bytes:0=_", "a mbm_local_bytes:0=_", "b mbm_total_bytes:0=e", "b mbm_local_bytes:0=e"}},
		{"slightly busier is not enough (no flapping)", []Group{g("a", 100, long), g("b", 110, 0)}, 0, nil},
		{"an idle group gives its counters back at once, hold or not", []Group{g("a", 100, time.Second, idle), g("b", 1, 0)}, 0,
			[]string{"a mbm_total_bytes:0=_", "a mbm_local_bytes:0=_", "b mbm_total_bytes:0=e", "b mbm_local_bytes:0=e"}},
		{"an idle group gets none", []Group{g("a", 100, 0, idle)}, 4, nil},
		{"a half-assigned winner is completed", []Group{g("a", 10, long, onlyTotal)}, 1,
			[]string{"a mbm_local_bytes:0=e"}},
		{"a half-assigned loser gives its one counter back", []Group{g("a", 10, long, onlyTotal), g("b", 30, 0)}, 1,
			[]string{"a mbm_total_bytes:0=_", "b mbm_total_bytes:0=e", "b mbm_local_bytes:0=e"}},
		{"one counter is no group's worth", []Group{g("a", 10, 0)}, 1, nil},
		{"equal: by name, the same at every sweep", []Group{g("b", 5, 0), g("a", 5, 0)}, 2,
			[]string{"a mbm_total_bytes:0=e", "a mbm_local_bytes:0=e"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := Input{Groups: tc.groups, Events: events, Free: map[string]int{"0": tc.free}, Now: t0, Hold: hold}
			got := lines(Plan(in))
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(tc.want, "\n "))
			}
		})
	}
}

// Domains are decided apart: a pod busy on one socket is not given the other's counter for it.
func TestPlanDomains(t *testing.T) {
	t.Parallel()
	a := Group{Path: "a", Live: true, Occupancy: map[string]uint64{"0": 50, "1": 1}}
	b := Group{Path: "b", Live: true, Occupancy: map[string]uint64{"0": 1, "1": 50}}
	got := lines(Plan(Input{Groups: []Group{a, b}, Events: events[:1], Free: map[string]int{"0": 1, "1": 1}, Now: t0, Hold: hold}))
	want := []string{"a mbm_total_bytes:0=e", "b mbm_total_bytes:1=e"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Applying a plan and planning again writes nothing, whatever the pods' occupancies: the
// policy reaches a fixed point in one sweep and stays there while nothing changes.
func TestPlanFixedPoint(t *testing.T) {
	t.Parallel()
	for free := 0; free <= 12; free++ {
		var groups []Group
		for i := range 9 {
			gr := g(string(rune('a'+i)), uint64(i*7%5), 0)
			if i%3 == 0 {
				gr.Wanted = true
			}
			if i < 3 {
				gr = g(gr.Path, gr.Occupancy["0"], time.Hour)
			}
			groups = append(groups, gr)
		}
		in := Input{Groups: groups, Events: events, Free: map[string]int{"0": free}, Now: t0, Hold: hold}
		apply(t, &in, Plan(in))
		if again := Plan(in); len(again) != 0 {
			t.Errorf("free %d: a second plan writes %q", free, lines(again))
		}
		in.Now = in.Now.Add(time.Hour)
		if again := Plan(in); len(again) != 0 {
			t.Errorf("free %d: past the hold, a plan writes %q", free, lines(again))
		}
	}
}

// apply does what the kernel does with the writes.
func apply(t *testing.T, in *Input, ws []Write) {
	t.Helper()
	for _, w := range ws {
		i := slices.IndexFunc(in.Groups, func(g Group) bool { return g.Path == w.Path })
		gr := &in.Groups[i]
		if gr.Assigned == nil {
			gr.Assigned = map[string][]string{}
			gr.Since = map[string]time.Time{}
		}
		if w.Assign {
			gr.Assigned[w.Domain] = append(slices.Clone(gr.Assigned[w.Domain]), w.Event)
			gr.Since[w.Domain] = in.Now
			in.Free[w.Domain]--
		} else {
			gr.Assigned[w.Domain] = slices.DeleteFunc(slices.Clone(gr.Assigned[w.Domain]), func(e string) bool { return e == w.Event })
			in.Free[w.Domain]++
		}
		if in.Free[w.Domain] < 0 {
			t.Fatalf("the plan %q assigns more counters than are free", lines(ws))
		}
	}
}
