package nriplugin

import (
	"maps"

	"github.com/containerd/nri/pkg/api"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/container"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/ocistate"
)

// What NRI sends, as the library's plain facts. Pure functions: the handlers only call them.

// podIdentity is the pod's identity from the fields the runtime itself sets in the
// PodSandbox (never its annotations or labels, which are the user's).
func podIdentity(pod *api.PodSandbox) (identity.Identity, error) {
	return identity.FromPodSandbox(identity.PodSandbox{ID: pod.GetId(), UID: pod.GetUid(), Namespace: pod.GetNamespace(), Name: pod.GetName()})
}

// containerIdentity is the pod's identity with the container's name, as the runtime sends it
// (kubelet's ContainerMetadata.Name over CRI): the record keeps it for the exporter's
// container label. A copy: the pod's identity is shared by its containers.
func containerIdentity(pod *identity.Identity, c *api.Container) *identity.Identity {
	idn := *pod
	idn.ContainerName = c.GetName()
	return &idn
}

// annotations are the pod's and the container's annotations (the container's win), for the
// opt-in/opt-out filters: a user may set them on either.
func annotations(pod *api.PodSandbox, ctr *api.Container) map[string]string {
	out := maps.Clone(pod.GetAnnotations())
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, ctr.GetAnnotations())
	return out
}

// class is the allocation class (CLOS) the container runs in, by ocistate.Class's rules: the
// runtime's RDT settings (the spec's linux.intelRdt, as CRI-O's and containerd's NRI send
// it, after the plugins' adjustments) with their closID, else the class kubelet asked for
// (CRI's rdt class, which runtimes make the spec's closID); RDT settings without either put
// the container in a class named by its id, as runc and crun do.
func class(ctr *api.Container) string {
	l := ctr.GetLinux()
	rdt := l.GetRdt()
	closID := rdt.GetClosId().GetValue()
	if closID == "" {
		closID = l.GetResources().GetRdtClass().GetValue()
	}
	switch {
	case rdt != nil:
		return ocistate.Class(&specs.LinuxIntelRdt{ClosID: closID, Schemata: rdt.GetSchemata().GetValue(),
			EnableMonitoring: rdt.GetEnableMonitoring().GetValue()}, ctr.GetId())
	case closID != "":
		return ocistate.Class(&specs.LinuxIntelRdt{ClosID: closID}, ctr.GetId())
	default:
		return ocistate.Class(nil, ctr.GetId())
	}
}

// selected reports whether the pod's labels meet the configured selector.
func selected(sel config.Selector, pod *api.PodSandbox) bool {
	return sel.Matches(pod.GetLabels())
}

// liveContainers is NRI's view of what runs, as reconcile takes it: every container that has
// an init (created or running), with its pod's identity. A pod's sandbox is not a container
// in NRI, so it is never placed (the infra rule, docs/design/pod-lifetime.md). Containers of pods the selector leaves
// out, or whose pod does not add up, are not live to resctrl-mon: a group made for them while
// they were included still ends with them (reconcile keeps a group whose recorded init runs).
// A container whose init fails check (checkInit: its pid is not in its cgroup, given to
// another process since the runtime read it) is refused: reconcile would move every task of
// that pid's cgroup, another pod's, into this pod's group.
func liveContainers(pods []*api.PodSandbox, ctrs []*api.Container, sel config.Selector,
	check func(pid int, c *api.Container) (string, error)) (live []container.Container, refused map[string]error) {
	byID := map[string]*api.PodSandbox{}
	for _, p := range pods {
		byID[p.GetId()] = p
	}
	refused = map[string]error{}
	idns := map[string]*identity.Identity{}
	// CRI-O's NRI before 1.36 gives no pid: the container's cgroup does, every process's
	// cgroup read once for all of them.
	var cgroups cgroup.Index
	inCgroup := func(path string) ([]int, error) {
		if cgroups == nil {
			var err error
			if cgroups, err = (cgroup.Host{}).Index(); err != nil {
				return nil, err
			}
		}
		return cgroups.In(path), nil
	}
	for _, c := range ctrs {
		pod := byID[c.GetPodSandboxId()]
		if pod == nil || c.GetState() == api.ContainerState_CONTAINER_STOPPED || !selected(sel, pod) {
			continue
		}
		pid := initPid(c, false, inCgroup)
		if pid == 0 {
			continue
		}
		if _, err := check(pid, c); err != nil {
			refused[c.GetId()] = err
			continue
		}
		idn, ok := idns[pod.GetId()]
		if !ok {
			v, err := podIdentity(pod)
			if err != nil {
				refused[c.GetId()] = err
				continue
			}
			idn = &v
			idns[pod.GetId()] = idn
		}
		if idn == nil {
			continue
		}
		live = append(live, container.Container{ID: c.GetId(), Runtime: "nri", Pid: pid, Annotations: annotations(pod, c),
			ClosID: class(c), CgroupsPath: c.GetLinux().GetCgroupsPath(), Pod: containerIdentity(idn, c), PodCgroup: pod.GetLinux().GetCgroupParent()})
	}
	return live, refused
}

// createdInit is the init of a created, not yet started container: the pid the runtime sent,
// or, when it sent none (CRI-O's NRI before 1.36), the one process in the container's cgroup:
// the runtime's init waiting to exec the container's command. More than one process there
// means the container has started, and none is taken (0).
func createdInit(c *api.Container) int { return initPid(c, true, cgroup.Host{}.ProcessesIn) }

// runningInit is a started container's process to place it by: the pid the runtime sent, or
// the lowest pid in the container's cgroup (its init, or what the init left). 0: none.
func runningInit(c *api.Container) int { return initPid(c, false, cgroup.Host{}.ProcessesIn) }

// initPid is the pid the runtime sent, else the lowest of the processes in the container's
// cgroup as inCgroup lists them (lowest first), and for a container not yet started
// (created) only if it is the one there. 0: none.
func initPid(c *api.Container, created bool, inCgroup func(cgroupsPath string) ([]int, error)) int {
	if pid := int(c.GetPid()); pid != 0 {
		return pid
	}
	procs, err := inCgroup(c.GetLinux().GetCgroupsPath())
	if err != nil || len(procs) == 0 || (created && len(procs) != 1) {
		return 0
	}
	return procs[0]
}
