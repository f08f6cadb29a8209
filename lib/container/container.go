// Package container is the one type shared by the code that finds live containers
// (lib/runtimes, which links runc's libcontainer) and the code that acts on them
// (lib/lifecycle, which the hook links): kept apart so the hook, started for every
// container, does not carry libcontainer's weight.
package container

import "github.com/resctrl-mon/resctrl-mon/lib/identity"

// Container is one live container, as its runtime's own state describes it.
type Container struct {
	ID          string
	Runtime     string // "runc" or "crun"
	Pid         int    // the init's host pid
	Bundle      string
	Annotations map[string]string
	ClosID      string // the allocation class its runtime put it in (ocistate.Class), "" for the root
	CgroupsPath string // linux.cgroupsPath
	// Pod is who the container is when its front end was told by the runtime itself (the
	// NRI adapter: the PodSandbox); nil means from Annotations and CgroupsPath, as a hook
	// reads them. Annotations then serve the opt-in/opt-out filters only.
	Pod *identity.Identity
	// PodCgroup is the pod's cgroup as the runtime that told Pod named it (NRI: the
	// sandbox's cgroup parent); with Pod nil it is read from CgroupsPath
	// (identity.PodCgroup).
	PodCgroup string
}
