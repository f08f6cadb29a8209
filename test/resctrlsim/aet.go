package resctrlsim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Intel AET's event groups (Linux ≥ 7.0), as arch/x86/kernel/cpu/resctrl/intel_aet.c
// enables them at boot:
//
//   - Two groups, each described by an XML file that says how many RMIDs its telemetry
//     regions track: "energy" (core_energy, activity: fixed-point, printed with decimals)
//     and "perf" (seven integer events). On Clearwater Forest both want 576
//     (energy_0x26696143, perf_0x26557651: .num_rmid = 576).
//   - enable_events(): a group one of whose regions tracks fewer RMIDs than its XML wants
//     is not enabled (all_regions_have_sufficient_rmid), unless the kernel command line
//     forces it on (rdt=energy, rdt=perf: intel_handle_aet_option); the kernel logs
//     "PERF_PKG <name>:0x<guid> monitoring not enabled due to insufficient RMIDs". Its
//     events are then never enabled (resctrl_enable_mon_event is not called): they are in
//     no mon_PERF_PKG_NN directory and not in info/PERF_PKG_MON/mon_features.
//   - A group forced on counts only as many RMIDs as its smallest region: "e->num_rmid =
//     min(e->num_rmid, p->regions[i].num_rmids)"; PERF_PKG's num_rmids is the smallest of
//     the enabled groups'.
//   - No group enabled: intel_aet_get_events() is false and there is no PERF_PKG resource:
//     no mon_PERF_PKG_NN, no info/PERF_PKG_MON, and L3's num_rmids alone bounds the groups.

// AETGroup is one of Intel AET's event groups: see Options.AETGroups.
type AETGroup struct {
	// Name is "energy" or "perf".
	Name string
	// RMIDs is the smallest num_rmids of the group's telemetry regions; zero means what
	// its XML description wants (AETXMLRMIDs): enough.
	RMIDs int
	// Force is rdt=<Name> on the kernel command line: enabled even with too few RMIDs.
	Force bool
}

// AETXMLRMIDs is how many RMIDs each AET event group's XML description says its regions
// track (Clearwater Forest's energy_0x26696143 and perf_0x26557651).
const AETXMLRMIDs = 576

// aetGroups are the events of each group, in the kernel's order; aetGUID its XML's GUID,
// which the kernel's log line names.
var (
	aetGroups = map[string][]string{
		"energy": {"core_energy", "activity"},
		"perf":   {"stalls_llc_hit", "c1_res", "unhalted_core_cycles", "stalls_llc_miss", "c6_res", "unhalted_ref_cycles", "uops_retired"},
	}
	aetGUID = map[string]int{"energy": 0x26696143, "perf": 0x26557651}
)

// perfEventRates turn one CPU second on a package into each integer perf event: arbitrary
// but fixed, as Rates are. c1_res and c6_res are residencies, which a busy task never adds to.
var perfEventRates = map[string]float64{
	"stalls_llc_hit": 1e8, "c1_res": 0, "unhalted_core_cycles": 3e9, "stalls_llc_miss": 5e7,
	"c6_res": 0, "unhalted_ref_cycles": 2e9, "uops_retired": 4e9,
}

// aet is what the kernel made of Options.AETGroups at boot.
type aet struct {
	events []string // enabled, in mon_features order
	rmids  int      // PERF_PKG's num_rmids
	off    []string // the kernel's log line for each group not enabled
}

// resolveAET applies enable_events() to each group.
func resolveAET(groups []AETGroup) aet {
	var a aet
	for _, g := range groups {
		events, known := aetGroups[g.Name]
		if !known {
			continue // validate says so
		}
		rmids := g.RMIDs
		if rmids == 0 {
			rmids = AETXMLRMIDs
		}
		if rmids < AETXMLRMIDs && !g.Force {
			a.off = append(a.off, fmt.Sprintf("PERF_PKG %s:0x%x monitoring not enabled due to insufficient RMIDs", g.Name, aetGUID[g.Name]))
			continue
		}
		a.events = append(a.events, events...)
		rmids = min(rmids, AETXMLRMIDs)
		if a.rmids == 0 || rmids < a.rmids {
			a.rmids = rmids
		}
	}
	return a
}

func validateAET(groups []AETGroup) error {
	var seen []string
	for _, g := range groups {
		if _, ok := aetGroups[g.Name]; !ok || slices.Contains(seen, g.Name) {
			return fmt.Errorf("aet group %q: must be \"energy\" or \"perf\", each once", g.Name)
		}
		if g.RMIDs < 0 {
			return fmt.Errorf("aet group %s: rmids %d must not be negative", g.Name, g.RMIDs)
		}
		seen = append(seen, g.Name)
	}
	return nil
}

// isAETEvent reports whether name is an event of some AET group.
func isAETEvent(name string) bool {
	for _, evs := range aetGroups {
		if slices.Contains(evs, name) {
			return true
		}
	}
	return false
}

// ParseAETGroup reads the command line's --aet-group: NAME, NAME:RMIDS or
// NAME:RMIDS:force (RMIDS 0: what the XML wants).
func ParseAETGroup(s string) (AETGroup, error) {
	parts := strings.Split(s, ":")
	g := AETGroup{Name: parts[0]}
	if len(parts) > 3 || (len(parts) == 3 && parts[2] != "force") {
		return AETGroup{}, fmt.Errorf("aet group %q: want NAME[:RMIDS[:force]]", s)
	}
	if len(parts) > 1 {
		n, err := strconv.Atoi(parts[1])
		if err != nil {
			return AETGroup{}, fmt.Errorf("aet group %q: rmids: %w", s, err)
		}
		g.RMIDs = n
	}
	g.Force = len(parts) == 3
	if err := validateAET([]AETGroup{g}); err != nil {
		return AETGroup{}, err
	}
	return g, nil
}
