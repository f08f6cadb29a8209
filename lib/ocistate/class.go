package ocistate

import specs "github.com/opencontainers/runtime-spec/specs-go"

// Class is the allocation class (the resctrl control group, CLOS) a runtime puts a container
// in by its spec's linux.intelRdt, "" for the root (default) class. Every front end decides
// the class here: the hook from config.json, the NRI adapter from what NRI sends, reconcile
// from the runtimes' state.
//
// The rules, read in runc's libcontainer/intelrdt (1.1 to 1.5) and crun's
// src/libcrun/intelrdt.c and linux.c (1.10 to 1.25), and runtime-spec's config-linux.md:
//
//   - no intelRdt: the runtime leaves resctrl alone, the container stays in the root class;
//   - closID "/": the root class by name (runtime-spec 1.3; runc ≥ 1.4 and crun ≥ 1.25, for
//     monitoring without a class; older runc refuses the spec, older crun writes the root's
//     own tasks, the root too);
//   - any other closID: that class;
//   - no closID: a class named by the container's id, made by the runtime (runc
//     getIntelRdtPath / NewManager: "clos := id"; crun libcrun_get_intelrdt_name), whatever
//     else is set: only enableMonitoring, only schemata, or nothing.
//
// enableMonitoring changes no class: runc ≥ 1.4 and crun ≥ 1.24 then also make their own
// monitoring group <class>/mon_groups/<container id> and put the container in it (runc 1.1–1.3
// drop the field). The pod's group is a sibling in the same class, and the kernel moves a
// task between monitoring groups of one class; runc's group, emptied, is then removed
// (lifecycle.RuncMadeGroup).
//
// A runtime that ignores intelRdt leaves the container in the root class although its spec
// names one: runc 1.1 on a host without RDT allocation (neither CAT nor MBA in /proc/cpuinfo
// and info/), crun before 1.10. Place then says the init is not in the class its spec names.
// An empty closID is taken as none, as runc does (crun ≥ 1.10 takes an explicit "" for the
// root's own directory; runtime-spec's Go types cannot tell the two apart).
func Class(rdt *specs.LinuxIntelRdt, containerID string) string {
	switch {
	case rdt == nil, rdt.ClosID == "/":
		return ""
	case rdt.ClosID != "":
		return rdt.ClosID
	default:
		return containerID
	}
}

// IntelRdt is the spec's linux.intelRdt, nil for none.
func IntelRdt(s *specs.Spec) *specs.LinuxIntelRdt {
	if s == nil || s.Linux == nil {
		return nil
	}
	return s.Linux.IntelRdt
}
