package resctrlsim

import (
	"fmt"
	"strings"
)

// What the kernel puts in each directory of a resctrl mount. The filesystem serves these
// names; mkdir refuses them at the root.

type fileKind uint8

const (
	fileTasks fileKind = iota
	fileCPUs
	fileCPUsList
	fileSchemata
	fileMode
	fileMonHWID
	fileCtrlHWID
	fileCounter
	fileStatic  // fixed text under info/
	fileLastCmd // info/last_cmd_status
	// Counter assignment (Linux ≥ 6.18), see assign.go.
	fileAssignMode  // info/L3_MON/mbm_assign_mode
	fileNumCntrs    // info/L3_MON/num_mbm_cntrs
	fileAvailCntrs  // info/L3_MON/available_mbm_cntrs
	fileOnMkdir     // info/L3_MON/mbm_assign_on_mkdir
	fileEventFilter // info/L3_MON/event_configs/<event>/event_filter
	fileAssignments // <group>/mbm_L3_assignments
	fileThreshold   // info/L3_MON/max_threshold_occupancy, see limbo.go
	fileIOAlloc     // info/L3/io_alloc, see ioalloc.go
)

type dirKind uint8

const (
	dirGroup        dirKind = iota // a group: the root, a control group or a monitoring group
	dirMonGroups                   // <group>/mon_groups
	dirMonData                     // <group>/mon_data
	dirDomain                      // <group>/mon_data/mon_L3_00 and the like
	dirSubDomain                   // <group>/mon_data/mon_L3_00/mon_sub_L3_01 (SNC)
	dirInfo                        // info
	dirInfoRes                     // info/L3, info/L3_MON, info/PERF_PKG_MON
	dirEventConfigs                // info/L3_MON/event_configs
	dirEventConfig                 // info/L3_MON/event_configs/<event>: domain holds the event
)

// entry is one name in a directory: a file of some kind or a directory of some kind.
type entry struct {
	name   string
	dir    bool
	file   fileKind
	sub    dirKind
	domain string // "L3" or "PERF_PKG" for domains and counters; the resource under info/
	idx    int    // domain id
	sum    bool   // a counter summed over the SNC nodes of cache idx (snc.go)
	text   string // content of a static file
	rw     bool
}

func groupEntries(kind groupKind, o Options) []entry {
	es := []entry{
		{name: "tasks", file: fileTasks, rw: true},
		{name: "cpus", file: fileCPUs, rw: true},
		{name: "cpus_list", file: fileCPUsList, rw: true},
		{name: "mon_data", dir: true, sub: dirMonData},
	}
	if kind != kindMon {
		es = append(es,
			entry{name: "schemata", file: fileSchemata, rw: true},
			entry{name: "mode", file: fileMode},
			entry{name: "mon_groups", dir: true, sub: dirMonGroups})
	}
	if kind == kindRoot {
		es = append(es, entry{name: "info", dir: true, sub: dirInfo})
	}
	if o.MBMAssign.assignable() {
		// "Exists when "mbm_event" counter assignment mode is supported", in each CTRL_MON
		// and MON group (the root included).
		es = append(es, entry{name: "mbm_L3_assignments", file: fileAssignments, rw: true})
	}
	if o.Debug {
		es = append(es, entry{name: "mon_hw_id", file: fileMonHWID})
		if kind != kindMon {
			es = append(es, entry{name: "ctrl_hw_id", file: fileCtrlHWID})
		}
	}
	return es
}

func monDataEntries(o Options) []entry {
	var es []entry
	for i := range o.L3Domains {
		es = append(es, entry{name: fmt.Sprintf("mon_L3_%02d", i), dir: true, sub: dirDomain, domain: "L3", idx: i})
	}
	for i := range o.PerfPkgDomains {
		es = append(es, entry{name: fmt.Sprintf("mon_PERF_PKG_%02d", i), dir: true, sub: dirDomain, domain: "PERF_PKG", idx: i})
	}
	return es
}

// domainEntries lists mon_data/mon_<domain>_<idx>. With SNC an L3 one holds the files
// summed over its nodes and a mon_sub_L3_YY directory per node (snc.go).
func domainEntries(domain string, idx int, o Options) []entry {
	names := l3Features()
	if domain == "PERF_PKG" {
		names = o.aet.events
	}
	snc := domain == "L3" && o.SNCWays > 1
	var es []entry
	for _, n := range names {
		es = append(es, entry{name: n, file: fileCounter, domain: domain, idx: idx, sum: snc})
	}
	if snc {
		for _, node := range sncNodes(idx, o) {
			es = append(es, entry{name: fmt.Sprintf("mon_sub_L3_%02d", node), dir: true, sub: dirSubDomain, domain: domain, idx: node})
		}
	}
	return es
}

// subDomainEntries lists mon_sub_L3_<node>: the node's own counters.
func subDomainEntries(node int) []entry {
	var es []entry
	for _, n := range l3Features() {
		es = append(es, entry{name: n, file: fileCounter, domain: "L3", idx: node})
	}
	return es
}

func infoEntries(o Options) []entry {
	es := []entry{
		{name: "last_cmd_status", file: fileLastCmd},
		{name: "L3", dir: true, sub: dirInfoRes, domain: "L3"},
		{name: "L3_MON", dir: true, sub: dirInfoRes, domain: "L3_MON"},
	}
	if o.PerfPkgDomains > 0 {
		es = append(es, entry{name: "PERF_PKG_MON", dir: true, sub: dirInfoRes, domain: "PERF_PKG_MON"})
	}
	return es
}

func infoResEntries(res string, o Options) []entry {
	static := func(name, text string) entry { return entry{name: name, file: fileStatic, text: text + "\n"} }
	switch res {
	case "L3":
		es := []entry{
			static("cbm_mask", cbmMask),
			static("min_cbm_bits", "1"),
			static("num_closids", fmt.Sprint(o.NumCLOSIDs)),
			static("shareable_bits", "0"),
		}
		if o.IOAlloc {
			es = append(es, entry{name: "io_alloc", file: fileIOAlloc, rw: true})
		}
		return es
	case "L3_MON":
		es := []entry{
			static("mon_features", strings.Join(l3Features(), "\n")),
			static("num_rmids", fmt.Sprint(o.l3RMIDs())),
			{name: "max_threshold_occupancy", file: fileThreshold, rw: true},
		}
		if o.MBMAssign != MBMAssignAbsent {
			es = append(es, entry{name: "mbm_assign_mode", file: fileAssignMode, rw: true})
		}
		if o.MBMAssign.assignable() {
			es = append(es,
				entry{name: "num_mbm_cntrs", file: fileNumCntrs},
				entry{name: "available_mbm_cntrs", file: fileAvailCntrs},
				entry{name: "mbm_assign_on_mkdir", file: fileOnMkdir, rw: true},
				entry{name: "event_configs", dir: true, sub: dirEventConfigs})
		}
		return es
	case "PERF_PKG_MON":
		return []entry{
			static("mon_features", strings.Join(o.aet.events, "\n")),
			static("num_rmids", fmt.Sprint(o.PerfPkgRMIDs)),
		}
	}
	return nil
}

func eventConfigsEntries() []entry {
	var es []entry
	for _, n := range mbmEventNames {
		es = append(es, entry{name: n, dir: true, sub: dirEventConfig, domain: n})
	}
	return es
}

func eventConfigEntries(event string) []entry {
	return []entry{{name: "event_filter", file: fileEventFilter, domain: event}}
}
