package resctrlsim

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Status is the simulator's view of itself, for tests and the control socket.
type Status struct {
	NumRMIDs     int           `json:"num_rmids"`
	RMIDsUsed    int           `json:"rmids_used"` // including the root group's
	RMIDsInLimbo int           `json:"rmids_in_limbo"`
	Groups       []GroupStatus `json:"groups"`
	// MBMAvailable is available_mbm_cntrs per L3 domain, in mbm_event mode only.
	MBMAvailable []int `json:"mbm_available,omitempty"`
	// AETOff is what the kernel logged at boot for each AET event group it did not enable
	// ("PERF_PKG energy:0x26696143 monitoring not enabled due to insufficient RMIDs").
	AETOff []string `json:"aet_off,omitempty"`
	Stats  Stats    `json:"stats"`
}

// GroupStatus is one group.
type GroupStatus struct {
	Path   string `json:"path"` // "" for the root
	Kind   string `json:"kind"` // root, ctrl, mon
	RMID   int    `json:"rmid"`
	CLOSID int    `json:"closid"`
	// MBMCounters is how many assignable counters the group holds, over every domain and
	// event (two per domain when both its events are counted everywhere).
	MBMCounters int `json:"mbm_counters,omitempty"`
}

// Status reports every group with its RMID and CLOSID.
func (s *Sim) Status() Status {
	m := s.m
	m.lock()
	defer m.unlock()
	st := Status{NumRMIDs: m.opts.groupRMIDs(), RMIDsInLimbo: len(m.rmids.limbo), Stats: m.stats, AETOff: m.opts.aet.off}
	var walk func(g *group)
	walk = func(g *group) {
		gs := GroupStatus{Path: g.Path(), Kind: [...]string{"root", "ctrl", "mon"}[g.kind], RMID: g.rmid, CLOSID: g.closid}
		for _, l := range g.counters.l3 {
			for _, c := range l.cntr {
				if c >= 0 {
					gs.MBMCounters++
				}
			}
		}
		st.Groups = append(st.Groups, gs)
		for _, c := range sortedGroups(g.mons) {
			walk(c)
		}
		for _, c := range sortedGroups(g.ctrls) {
			walk(c)
		}
	}
	walk(m.root)
	st.RMIDsUsed = len(st.Groups)
	if m.assign.enabled {
		for d := range m.opts.L3Domains {
			st.MBMAvailable = append(st.MBMAvailable, m.assign.available(d))
		}
	}
	return st
}

// RMID returns the RMID of the group at path ("" for the root, "mon_groups/x"), or -1.
func (s *Sim) RMID(path string) int {
	for _, g := range s.Status().Groups {
		if g.Path == path {
			return g.RMID
		}
	}
	return -1
}

// Tasks reads the tasks file of the group at path ("" for the root, "mon_groups/x") through
// the mount, as any reader would, and returns its thread ids.
func (s *Sim) Tasks(path string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, path, "tasks"))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("tasks of %q: %q is not a thread id", path, f)
		}
		out = append(out, n)
	}
	return out, nil
}
