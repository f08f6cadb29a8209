// Package mbmpolicy decides which monitoring groups hold the bandwidth counters of the
// kernel's mbm_event mode (Linux ≥ 6.18, AMD ABMC). There, a group's mbm_total_bytes and
// mbm_local_bytes count only while a hardware counter is assigned to each, each L3 domain has
// a few (info/L3_MON/num_mbm_cntrs), and a counter assigned again starts from zero. Plan is a
// pure function of what the sweep read: it reads and writes nothing itself.
package mbmpolicy

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Group is one group resctrl-mon owns, as the sweep found it.
type Group struct {
	// Path is the group's path below the resctrl root ("mon_groups/<uid>").
	Path string
	// Wanted: the pod asked for bandwidth counters (the mbmAssignmentAnnotation).
	Wanted bool
	// Live: the group has containers. An idle group (its pod stopped, kept for the
	// retention window) counts nothing worth a counter.
	Live bool
	// Occupancy is llc_occupancy in bytes by L3 domain id: how busy the pod is there.
	Occupancy map[string]uint64
	// Assigned lists, by domain id, the events that hold a counter there.
	Assigned map[string][]string
	// Since is when the group's counters in a domain were assigned (the group's creation
	// when the kernel gave them at mkdir).
	Since map[string]time.Time
}

// Input is everything Plan decides from.
type Input struct {
	Groups []Group
	// Events are the events a group counts with a counter each (mbm_total_bytes,
	// mbm_local_bytes): a group is counted in a domain only with all of them.
	Events []string
	// Free is available_mbm_cntrs by domain id; the domains to decide for.
	Free map[string]int
	Now  time.Time
	// Hold is how long a group keeps a counter before a busier one may take it.
	Hold time.Duration
}

// Write is one line to write to a group's mbm_L3_assignments.
type Write struct {
	Path   string // the group, below the resctrl root
	Domain string
	Event  string
	Assign bool // true: "=e", false: "=_"
}

// Line is the write as the kernel takes it: "mbm_total_bytes:0=e".
func (w Write) Line() string {
	state := "_"
	if w.Assign {
		state = "e"
	}
	return fmt.Sprintf("%s:%s=%s", w.Event, w.Domain, state)
}

// incumbentBonus is the margin by which a group without counters must be busier than one
// holding them (past its hold) to take them: LLC occupancy moves all the time, and two pods
// of about the same size would otherwise trade counters at every hold period, each handover
// restarting a count from zero.
const incumbentBonus = 1.25

// Plan returns the writes that bring the assignment to the policy, unassignments first (they
// free the counters the assignments take). In each domain the counters go to live groups, those
// that asked (Wanted) first, then the busiest by LLC occupancy; idle groups give theirs back at
// once; a live group that got its counters less than Hold ago keeps them; and when the groups
// that should hold counters are those that do, nothing is written.
func Plan(in Input) []Write {
	var unassign, assign []Write
	for _, d := range slices.Sorted(maps.Keys(in.Free)) {
		u, a := planDomain(in, d)
		unassign = append(unassign, u...)
		assign = append(assign, a...)
	}
	return append(unassign, assign...)
}

func planDomain(in Input, d string) (unassign, assign []Write) {
	cost := len(in.Events)
	if cost == 0 {
		return nil, nil
	}
	held := func(g Group) []string {
		return slices.DeleteFunc(slices.Clone(g.Assigned[d]), func(e string) bool { return !slices.Contains(in.Events, e) })
	}
	full := func(g Group) bool { return len(held(g)) == cost }
	capacity := in.Free[d]
	for _, g := range in.Groups {
		capacity += len(held(g))
	}
	slots := capacity / cost

	winners := map[string]bool{}
	// A live group within its hold keeps its counters whatever the ranking says.
	for _, g := range in.Groups {
		if g.Live && full(g) && in.Now.Sub(g.Since[d]) < in.Hold {
			winners[g.Path] = true
		}
	}
	ranked := slices.DeleteFunc(slices.Clone(in.Groups), func(g Group) bool { return !g.Live || winners[g.Path] })
	score := func(g Group) float64 {
		s := float64(g.Occupancy[d])
		if full(g) {
			s *= incumbentBonus
		}
		return s
	}
	slices.SortStableFunc(ranked, func(a, b Group) int {
		if a.Wanted != b.Wanted {
			if a.Wanted {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(score(b), score(a)); c != 0 {
			return c
		}
		// Equal: the holder keeps them (no handover for nothing), then by name, so the
		// plan is the same at every sweep.
		if full(a) != full(b) {
			if full(a) {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Path, b.Path)
	})
	for _, g := range ranked {
		if len(winners) >= slots {
			break
		}
		winners[g.Path] = true
	}
	for _, g := range in.Groups {
		h := held(g)
		for _, e := range in.Events {
			has := slices.Contains(h, e)
			switch {
			case winners[g.Path] && !has:
				assign = append(assign, Write{Path: g.Path, Domain: d, Event: e, Assign: true})
			case !winners[g.Path] && has:
				unassign = append(unassign, Write{Path: g.Path, Domain: d, Event: e})
			}
		}
	}
	return unassign, assign
}
