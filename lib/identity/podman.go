package identity

import (
	"path"
	"strings"
)

// FromSpec is FromAnnotations for a container whose spec's linux.cgroupsPath is known too.
// It tells one more case apart: a podman pod's infra container, which podman gives no
// annotation of its pod (testdata/podman-pod-infra.json: its annotations are those of a
// plain `podman run`), is reported as the pod's sandbox, with its own id as SandboxID: the
// id its members name as theirs.
//
// What tells it is the cgroup. podman puts a pod's containers, the infra included, under the
// pod's cgroup (the default, --share-parent=true), and names its sandbox in every member's
// annotations; so a container under a podman pod's cgroup without a sandbox id is the infra.
// (Not io.container.manager: podman's poststop state lacks it. A container of CRI-O or
// containerd carries its runtime's keys and never gets here; one run directly with runc or
// crun under a cgroup named as podman names them is only left out of monitoring.)
// A pod made with --share-parent=false leaves its infra's cgroup that of a plain container
// (testdata/podman-pod-noshareparent-infra.json): that infra stays Plain.
func FromSpec(id string, a map[string]string, cgroupsPath string) (Identity, error) {
	idn, err := FromAnnotations(id, a)
	if err != nil || idn.Runtime != Plain {
		return idn, err
	}
	if IsSandboxID(id) && podmanPodCgroup(id, cgroupsPath) {
		return Identity{Runtime: Podman, SandboxID: id, Sandbox: true}, nil
	}
	return idn, nil
}

// podmanPodCgroup reports whether cgroupsPath is where podman puts container id of a pod
// (libpod: the pod's cgroup is <parent>/<pod id> with cgroupfs, a slice
// <parent>-libpod_pod_<pod id>.slice with systemd; a container's is libpod-<id> under it, or
// <slice>:libpod:<id>). Only the cgroupfs form is captured here (no systemd on these
// machines); the systemd form is read from podman's source (libpod/container_internal_linux.go,
// pod_internal_linux.go), the same from 4.3 to 5.x.
func podmanPodCgroup(id, cgroupsPath string) bool {
	var pod string
	if dir, ok := strings.CutSuffix(cgroupsPath, "/libpod-"+id); ok {
		pod = path.Base(dir)
	} else if slice, ok := strings.CutSuffix(cgroupsPath, ".slice:libpod:"+id); ok {
		i := strings.LastIndex(slice, "libpod_pod_")
		if i < 0 {
			return false
		}
		pod = slice[i+len("libpod_pod_"):]
	}
	return pod != id && IsSandboxID(pod)
}
