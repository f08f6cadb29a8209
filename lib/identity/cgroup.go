package identity

import (
	"path"
	"strings"
)

// PodCgroup is the pod's cgroup as the runtime named it in container id's linux.cgroupsPath
// (a cgroupfs path, or a systemd slice name), "" when the runtime named none. Only a cgroup
// the runtime made for the pod is one: the parent of a container with no pod is a whole slice
// (system.slice, machine.slice, a podman parent), whose pressure is everybody's in it.
//
//   - CRI-O and containerd put a Kubernetes pod's containers directly in the cgroup parent
//     kubelet gave the pod's sandbox: the spec's cgroupsPath is the pod config's
//     linux.cgroup_parent, then the container's own cgroup (testdata/crio-kubelet.json,
//     containerd-container.json), or with the systemd driver "<pod slice>:<prefix>:<id>".
//   - podman puts a pod's containers in the pod's cgroup, <parent>/<pod id>/libpod-<id>
//     (testdata/podman-pod-member.json), or with systemd "<parent>-libpod_pod_<pod id>.slice:
//     libpod:<id>" (read from podman's source, see podmanPodCgroup); a pod made with
//     --share-parent=false has none (podman-pod-noshareparent-member.json).
//   - A container with no pod (runc, crun, podman run) has none.
func PodCgroup(idn Identity, id, cgroupsPath string) string {
	switch idn.Runtime {
	case CRIO, Containerd:
		if idn.PodUID == "" {
			return ""
		}
		if slice, _, ok := systemdPath(cgroupsPath); ok {
			return slice
		}
		if dir := path.Dir(cgroupsPath); strings.HasPrefix(cgroupsPath, "/") && path.Clean(cgroupsPath) == cgroupsPath && dir != "/" {
			return dir
		}
	case Podman:
		if dir, ok := strings.CutSuffix(cgroupsPath, "/libpod-"+id); ok && IsSandboxID(path.Base(dir)) && path.Base(dir) != id {
			return dir
		}
		if slice, ok := strings.CutSuffix(cgroupsPath, ":libpod:"+id); ok && strings.Contains(slice, "libpod_pod_") && strings.HasSuffix(slice, ".slice") {
			return slice
		}
	}
	return ""
}

// systemdPath splits the systemd driver's "slice:prefix:name".
func systemdPath(p string) (slice, unit string, ok bool) {
	parts := strings.Split(p, ":")
	if len(parts) != 3 || strings.HasPrefix(p, "/") || !strings.HasSuffix(parts[0], ".slice") {
		return "", "", false
	}
	return parts[0], parts[1] + "-" + parts[2] + ".scope", true
}
