// Package container is the one type shared by the code that finds live containers
// (lib/runtimes, which links runc's libcontainer) and the code that acts on them
// (lib/lifecycle, which the hook links): kept apart so the hook, started for every
// container, does not carry libcontainer's weight.
package container

// Container is one live container, as its runtime's own state describes it.
type Container struct {
	ID          string
	Runtime     string // "runc" or "crun"
	Pid         int    // the init's host pid
	Bundle      string
	Annotations map[string]string
	ClosID      string // linux.intelRdt.closID, "" for none
	CgroupsPath string // linux.cgroupsPath
}
