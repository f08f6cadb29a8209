package identity

import (
	"errors"
	"testing"
)

func TestFromSpec(t *testing.T) {
	t.Parallel()
	const pod = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
	podman := map[string]string{"io.container.manager": "libpod"}
	infra := Identity{Runtime: Podman, SandboxID: sb, Sandbox: true}
	for name, tc := range map[string]struct {
		id, cgroupsPath string
		a               map[string]string
		want            Identity
	}{
		"infra, cgroupfs": {sb, "/libpod_parent/" + pod + "/libpod-" + sb, podman, infra},
		// From podman's source (no systemd here to capture it): <slice>:libpod:<id>.
		"infra, systemd":             {sb, "machine-libpod_pod_" + pod + ".slice:libpod:" + sb, podman, infra},
		"infra, pod's cgroup parent": {sb, "/my/parent/" + pod + "/libpod-" + sb, nil, infra},
		"podman run, cgroupfs":       {sb, "/libpod_parent/libpod-" + sb, podman, Identity{Runtime: Plain}},
		"podman run, systemd":        {sb, "machine.slice:libpod:" + sb, podman, Identity{Runtime: Plain}},
		"no cgroup path":             {sb, "", podman, Identity{Runtime: Plain}},
		"pod id is its own":          {sb, "/libpod_parent/" + sb + "/libpod-" + sb, podman, Identity{Runtime: Plain}},
		"another container's path":   {sb, "/libpod_parent/" + pod + "/libpod-" + otherSB, podman, Identity{Runtime: Plain}},
		"not a podman id":            {"c1", "/libpod_parent/" + pod + "/libpod-c1", podman, Identity{Runtime: Plain}},
		"pod id not hex":             {sb, "/libpod_parent/../libpod-" + sb, podman, Identity{Runtime: Plain}},
		"systemd, no pod slice":      {sb, "machine-libpod_pod_.slice:libpod:" + sb, podman, Identity{Runtime: Plain}},
		// The annotations decide first: a member under the pod's cgroup is a member.
		"member": {otherSB, "/libpod_parent/" + pod + "/libpod-" + otherSB,
			map[string]string{CRIOSandboxID: sb, CRIOContainerType: "container"}, Identity{Runtime: Podman, SandboxID: sb}},
		"cri-o": {otherSB, "/libpod_parent/" + pod + "/libpod-" + otherSB,
			map[string]string{CRIOPodUID: uid, CRIOSandboxID: sb, CRIOContainerType: "container"}, Identity{Runtime: CRIO, PodUID: uid, SandboxID: sb}},
	} {
		got, err := FromSpec(tc.id, tc.a, tc.cgroupsPath)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", name, got, err, tc.want)
		}
	}
}

func TestFromSpecRefused(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		id   string
		a    map[string]string
		want error
	}{
		// What FromAnnotations refuses, FromSpec refuses whatever the cgroup.
		"bad sandbox": {sb, map[string]string{CRIOSandboxID: "abc"}, ErrBadAnnotation},
		// podman never makes a member its own sandbox.
		"member is its own sandbox": {sb, map[string]string{CRIOSandboxID: sb, CRIOContainerType: "container"}, ErrMismatch},
	} {
		_, err := FromSpec(tc.id, tc.a, "/libpod_parent/"+otherSB+"/libpod-"+tc.id)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", name, err, tc.want)
		}
	}
}

func FuzzFromSpec(f *testing.F) {
	f.Add(sb, "/libpod_parent/"+otherSB+"/libpod-"+sb, "", "")
	f.Add(sb, "machine-libpod_pod_"+otherSB+".slice:libpod:"+sb, "", "")
	f.Add(sb, "/libpod_parent/"+otherSB+"/libpod-"+sb, otherSB, "container")
	f.Add("c1", "/libpod_parent/libpod-c1", "", "")
	f.Fuzz(func(t *testing.T, id, cgroupsPath, crioSB, crioType string) {
		a := map[string]string{}
		if crioSB != "" {
			a[CRIOSandboxID] = crioSB
		}
		if crioType != "" {
			a[CRIOContainerType] = crioType
		}
		byAnn, annErr := FromAnnotations(id, a)
		got, err := FromSpec(id, a, cgroupsPath)
		switch {
		case annErr != nil:
			// The spec never makes refused annotations acceptable.
			if err == nil {
				t.Errorf("FromSpec accepted %v (id %q), which FromAnnotations refused: %v", a, id, annErr)
			}
		case err != nil:
			t.Errorf("FromSpec refused %v (id %q, cgroup %q), which FromAnnotations accepted: %v", a, id, cgroupsPath, err)
		case byAnn.Runtime != Plain && got != byAnn:
			// The cgroup only ever refines a container of no pod.
			t.Errorf("FromSpec %+v differs from FromAnnotations %+v", got, byAnn)
		case got.Sandbox && (got.SandboxID != id || !IsSandboxID(id)):
			t.Errorf("a sandbox whose sandbox id is not its own 64-hex id: %+v of %q", got, id)
		case got != byAnn && !got.Sandbox:
			t.Errorf("FromSpec changed %+v into %+v, not into a sandbox", byAnn, got)
		}
	})
}
