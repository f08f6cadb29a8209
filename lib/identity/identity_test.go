package identity

import (
	"errors"
	"strings"
	"testing"
)

const (
	uid     = "0f8b2c1e-1111-2222-3333-444455556666"
	sb      = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	otherSB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func TestFromAnnotations(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		id   string
		a    map[string]string
		want Identity
	}{
		"cri-o container": {"c1", map[string]string{CRIOPodUID: uid, CRIOSandboxID: sb, CRIOContainerType: "container",
			CRIOPodNamespace: "default", CRIOPodName: "web", CRIOContainerName: "app",
			CRIOLabels: `{"io.kubernetes.pod.uid":"` + uid + `"}`},
			Identity{Runtime: CRIO, PodUID: uid, SandboxID: sb, Namespace: "default", PodName: "web", ContainerName: "app"}},
		"cri-o compact uppercase uid": {"c1", map[string]string{CRIOPodUID: "0F8B2C1E111122223333444455556666", CRIOSandboxID: sb, CRIOContainerType: "container"},
			Identity{Runtime: CRIO, PodUID: uid, SandboxID: sb}},
		"cri-o sandbox": {sb, map[string]string{CRIOPodUID: uid, CRIOSandboxID: sb, CRIOContainerType: "sandbox"},
			Identity{Runtime: CRIO, PodUID: uid, SandboxID: sb, Sandbox: true}},
		// kubelet's label on a sandbox: container name "POD".
		"cri-o sandbox named POD": {sb, map[string]string{CRIOPodUID: uid, CRIOSandboxID: sb, CRIOContainerType: "sandbox", CRIOContainerName: "POD"},
			Identity{Runtime: CRIO, PodUID: uid, SandboxID: sb, Sandbox: true, ContainerName: "POD"}},
		"containerd container": {"c2", map[string]string{ContainerdPodUID: uid, ContainerdSandboxID: sb, ContainerdContainerType: "container",
			ContainerdPodNamespace: "kube-system", ContainerdPodName: "dns", ContainerdContainerName: "coredns"},
			Identity{Runtime: Containerd, PodUID: uid, SandboxID: sb, Namespace: "kube-system", PodName: "dns", ContainerName: "coredns"}},
		"podman pod":     {"c3", map[string]string{CRIOSandboxID: sb}, Identity{Runtime: Podman, SandboxID: sb}},
		"podman 4.3 pod": {"c3", map[string]string{CRIOSandboxID: sb, CRIOContainerType: "container"}, Identity{Runtime: Podman, SandboxID: sb}},
		"plain":          {"c4", map[string]string{"org.opencontainers.image.title": "x"}, Identity{Runtime: Plain}},
		"no annotations": {"c5", nil, Identity{Runtime: Plain}},
	} {
		got, err := FromAnnotations(tc.id, tc.a)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", name, got, err, tc.want)
		}
	}
}

func TestRefused(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		a    map[string]string
		want error
	}{
		"labels disagree": {map[string]string{CRIOPodUID: uid, CRIOSandboxID: sb, CRIOContainerType: "container",
			CRIOLabels: `{"io.kubernetes.pod.uid":"11111111-2222-3333-4444-555555555555"}`}, ErrMismatch},
		"two runtimes": {map[string]string{ContainerdPodUID: uid, ContainerdSandboxID: sb, CRIOSandboxID: otherSB, CRIOContainerType: "container"}, ErrMismatch},
		"containerd uid vs cri-o key": {map[string]string{ContainerdPodUID: uid, ContainerdSandboxID: sb, ContainerdContainerType: "container",
			CRIOPodUID: "11111111-2222-3333-4444-555555555555"}, ErrMismatch},
		"fake sandbox":        {map[string]string{CRIOPodUID: uid, CRIOSandboxID: sb, CRIOContainerType: "sandbox"}, ErrMismatch},
		"uid without sandbox": {map[string]string{CRIOPodUID: uid}, ErrMismatch},
		"containerd no uid":   {map[string]string{ContainerdSandboxID: sb, ContainerdContainerType: "container"}, ErrMismatch},
		// Only the sandbox may be called POD.
		"app container named POD": {map[string]string{CRIOPodUID: uid, CRIOSandboxID: sb, CRIOContainerType: "container", CRIOContainerName: "POD"}, ErrBadAnnotation},
		// CRI-O without kubelet's labels: no UID, and CRI-O's own ContainerID key, which
		// podman never sets, so it is not taken for a podman pod.
		"cri-o no uid":         {map[string]string{CRIOSandboxID: sb, CRIOContainerType: "container", CRIOContainerID: "c1"}, ErrMismatch},
		"cri-o sandbox no uid": {map[string]string{CRIOSandboxID: sb, CRIOContainerType: "sandbox"}, ErrMismatch},
		"non-uuid uid":         {map[string]string{CRIOPodUID: "../../etc", CRIOSandboxID: sb, CRIOContainerType: "container"}, ErrBadAnnotation},
		"slash in sandbox":     {map[string]string{CRIOSandboxID: "../" + sb[3:]}, ErrBadAnnotation},
		"short sandbox":        {map[string]string{CRIOSandboxID: "abc"}, ErrBadAnnotation},
		"NUL":                  {map[string]string{CRIOPodUID: uid + "\x00", CRIOSandboxID: sb, CRIOContainerType: "container"}, ErrBadAnnotation},
		"100 KB value":         {map[string]string{CRIOLabels: strings.Repeat("x", 100<<10), CRIOSandboxID: sb}, ErrBadAnnotation},
		"bad type":             {map[string]string{CRIOPodUID: uid, CRIOSandboxID: sb, CRIOContainerType: "pause"}, ErrBadAnnotation},
		"bad labels json":      {map[string]string{CRIOPodUID: uid, CRIOSandboxID: sb, CRIOContainerType: "container", CRIOLabels: "{"}, ErrBadAnnotation},
		"bad namespace":        {map[string]string{CRIOPodUID: uid, CRIOSandboxID: sb, CRIOContainerType: "container", CRIOPodNamespace: "a/../b"}, ErrBadAnnotation},
	} {
		_, err := FromAnnotations("c1", tc.a)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", name, err, tc.want)
		}
	}
}

func FuzzFromAnnotations(f *testing.F) {
	f.Add("c1", uid, sb, "container", "", "")
	f.Add(sb, "", "", "", sb, "sandbox")
	f.Fuzz(func(t *testing.T, id, podUID, crioSB, crioType, cdSB, cdType string) {
		a := map[string]string{CRIOPodUID: podUID, CRIOSandboxID: crioSB, CRIOContainerType: crioType,
			ContainerdSandboxID: cdSB, ContainerdContainerType: cdType}
		for k, v := range a {
			if v == "" {
				delete(a, k)
			}
		}
		got, err := FromAnnotations(id, a)
		if err != nil {
			return
		}
		// Whatever is accepted is safe to use as a directory name.
		for _, s := range []string{got.PodUID, got.SandboxID} {
			if strings.ContainsAny(s, "/\x00") || s == "." || s == ".." {
				t.Errorf("accepted unsafe id %q from %v", s, a)
			}
		}
	})
}
