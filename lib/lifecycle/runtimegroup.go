package lifecycle

import (
	"fmt"
	"strings"

	"github.com/resctrl-mon/resctrl-mon/lib/ocistate"
	"github.com/resctrl-mon/resctrl-mon/lib/procfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// RuncMadeGroup is Placement.RuntimeGroup for a front end: the spec sets
// linux.intelRdt.enableMonitoring, and the container's init, still held by its runtime, is
// runc's ("runc:[2:INIT]", the name runc's nsexec gives it; runc before 1.4 makes no group,
// and one that is not there is no error to remove). Only runc's group is removed:
//
//   - crun ≥ 1.24 makes the same group, but writes every `crun exec` process into it
//     (libcrun_join_process), a write that fails, and the exec with it, once the group is
//     gone; its init is a fork of crun, named "crun";
//   - a runtime not known here may use its group as crun does;
//   - an init that has exec'd already (NRI's late placement) no longer tells its runtime.
//
// Those keep their group, and the container a second RMID until the runtime deletes it.
func RuncMadeGroup(enableMonitoring bool, pid int) bool {
	if !enableMonitoring {
		return false
	}
	comm, err := procfs.Comm(pid)
	return err == nil && strings.HasPrefix(comm, "runc:")
}

// dropRuntimeGroup removes the monitoring group the runtime made for a container it was
// asked to monitor itself (linux.intelRdt.enableMonitoring), once Place has moved the
// container into its own group. What runc ≥ 1.4 does (libcontainer/intelrdt, Apply and
// Destroy), read for this:
//
//   - before any hook, it makes <class>/mon_groups/<container id> (a group already there is
//     taken as is) and writes the init's pid into it: one RMID, the container's alone;
//   - it never writes into that group again: `runc exec` writes its process into the
//     class's own tasks only;
//   - at delete it removes the group, and one already gone is no error (ENOENT is ignored;
//     without a closID it removes the class instead, with whatever is below it).
//
// The container's tasks have left that group for ours (a task is in one monitoring group at
// a time), so it counts nothing and only holds an RMID, which the runtime would free at the
// container's end only. Removing it now frees it: one container, one RMID. The kernel's
// rmdir of a monitoring group hands any task still in it to the class's own group (its
// class stays), where reconcile finds it outside its pod's group; none is expected, the
// init being held by the runtime.
//
// A failure is not the container's: it is placed and counted. It is logged and said in the
// outcome, and the runtime removes its group at delete as ever.
func (m *Manager) dropRuntimeGroup(p Placement, out *Outcome) {
	path := GroupPath(p.Class, p.ContainerID)
	switch {
	case path == out.Group:
		// Never ours: our group names are pod UIDs, sandbox ids and ctr-<id>.
		return
	case !ocistate.ValidContainerID(p.ContainerID) || canonicalGroupName(p.ContainerID) != p.ContainerID:
		// A name Remove would read as a pod UID, or one not a group's name at all: left to
		// the runtime.
		m.log.Warn("the runtime's own monitoring group is left (its name is not one resctrl-mon removes)", "container", p.ContainerID, "group", path)
		out.Detail = joinDetail(out.Detail, "the runtime's group "+path+" left: its name is not one resctrl-mon removes")
		return
	}
	g := resctrlfs.Addr{Class: p.Class, Name: p.ContainerID}
	if !m.rs.Exists(g) {
		// runc before 1.4 made none; or it is gone already: nothing holds an RMID.
		return
	}
	if err := m.rs.Remove(g); err != nil {
		m.log.Warn("the runtime's own monitoring group could not be removed: it holds an RMID until the runtime deletes the container",
			"container", p.ContainerID, "group", path, "err", err, "kernel", m.kernelSays())
		out.Detail = joinDetail(out.Detail, fmt.Sprintf("the runtime's group %s not removed: %v", path, err))
		return
	}
	out.Detail = joinDetail(out.Detail, "the runtime's group "+path+" removed")
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
