package identity

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The pod cgroup each runtime really names (testdata): CRI-O's and containerd's is the pod
// config's linux.cgroup_parent crictl sent, podman's the pod's own cgroup; a container with no
// pod, or a podman pod made with --share-parent=false, has none.
func TestPodCgroupFixtures(t *testing.T) {
	t.Parallel()
	for name := range fixtureWants() {
		f := readFixture(t, name)
		id, a, cgroupsPath := f.IDs.Self, f.CreateRuntime.State.Annotations, ""
		if f.CreateRuntime.Spec != nil {
			cgroupsPath = f.CreateRuntime.Spec.CgroupsPath
		}
		if f.Bundle != nil {
			a, cgroupsPath = f.Bundle.Spec.Annotations, f.Bundle.Spec.CgroupsPath
		}
		want := ""
		switch {
		case strings.HasPrefix(name, "crio-"), strings.HasPrefix(name, "containerd-"):
			want = capturedCgroupParent(t, name)
			if want == "" {
				t.Fatalf("%s: no linux.cgroup_parent in the captured pod config", name)
			}
		case name == "podman-pod-member", name == "podman-pod-infra":
			want = "/libpod_parent/" + f.IDs.Pod
		}
		idn, err := FromSpec(id, a, cgroupsPath)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := PodCgroup(idn, id, cgroupsPath); got != want {
			t.Errorf("%s: PodCgroup(%+v, %s) = %q, want %q", name, idn, cgroupsPath, got, want)
		}
	}
}

// capturedCgroupParent is the linux.cgroup_parent of the pod config a capture sent.
func capturedCgroupParent(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Captured struct {
			Configs struct {
				Pod struct {
					Linux struct {
						CgroupParent string `json:"cgroup_parent"`
					} `json:"linux"`
				} `json:"POD_JSON"`
			} `json:"configs"`
		} `json:"captured"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Captured.Configs.Pod.Linux.CgroupParent
}

// The systemd driver's forms, which no capture here has (no systemd on these machines): from
// CRI-O's and containerd's "<pod slice>:<prefix>:<id>" and podman's source (see podmanPodCgroup).
func TestPodCgroupSystemd(t *testing.T) {
	t.Parallel()
	id := strings.Repeat("c", 64)
	pod := strings.Repeat("d", 64)
	k8s := Identity{Runtime: CRIO, PodUID: "0f8b2c1e-1111-2222-3333-444455556666", SandboxID: pod}
	for _, tc := range []struct {
		idn               Identity
		cgroupsPath, want string
	}{
		{k8s, "kubepods-besteffort-pod0f8b2c1e_1111_2222_3333_444455556666.slice:crio:" + id, "kubepods-besteffort-pod0f8b2c1e_1111_2222_3333_444455556666.slice"},
		{Identity{Runtime: Containerd, PodUID: k8s.PodUID, SandboxID: pod}, "kubepods-pod1.slice:cri-containerd:" + id, "kubepods-pod1.slice"},
		{Identity{Runtime: Podman, SandboxID: pod}, "machine-libpod_pod_" + pod + ".slice:libpod:" + id, "machine-libpod_pod_" + pod + ".slice"},
		{Identity{Runtime: Podman, SandboxID: pod}, "machine.slice:libpod:" + id, ""},
		{Identity{Runtime: Plain}, "system.slice:runc:" + id, ""},
		{Identity{Runtime: Plain}, "/system.slice/runc-" + id + ".scope", ""},
		{Identity{Runtime: CRIO}, "/kubepods/pod1/crio-" + id, ""}, // no pod UID: no pod
		{k8s, "/crio-" + id, ""},
		{k8s, "relative/crio-" + id, ""},
	} {
		if got := PodCgroup(tc.idn, id, tc.cgroupsPath); got != tc.want {
			t.Errorf("PodCgroup(%+v, %q) = %q, want %q", tc.idn, tc.cgroupsPath, got, tc.want)
		}
	}
}

// A pod cgroup is only ever what the runtime's cgroupsPath holds before the container's own.
func FuzzPodCgroup(f *testing.F) {
	id := strings.Repeat("c", 64)
	f.Add(string(CRIO), "/kubepods/pod1/crio-"+id)
	f.Add(string(Podman), "/libpod_parent/"+strings.Repeat("d", 64)+"/libpod-"+id)
	f.Add(string(Containerd), "kubepods-pod1.slice:cri-containerd:"+id)
	f.Fuzz(func(t *testing.T, runtime, cgroupsPath string) {
		idn := Identity{Runtime: Runtime(runtime), PodUID: "0f8b2c1e-1111-2222-3333-444455556666", SandboxID: strings.Repeat("d", 64)}
		got := PodCgroup(idn, id, cgroupsPath)
		if got != "" && (got == "/" || !strings.HasPrefix(cgroupsPath, got) || len(got) >= len(cgroupsPath)) {
			t.Errorf("PodCgroup(%s, %q) = %q: not a parent the path names", runtime, cgroupsPath, got)
		}
	})
}
