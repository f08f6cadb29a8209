package identity

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fixture is the part of a testdata file the identity needs: what the runtime sent a hook
// (the state on stdin, and the bundle's cgroupsPath) at each stage. The files are written by
// test/e2e/identity's TestIdentityFixtures, TestCaptureCRIO and TestCaptureContainerd (-update-fixtures)
// from what the real runtimes sent (see "captured" in each).
type fixture struct {
	IDs struct {
		Self, Pod, Infra, PodUID string
	} `json:"ids"`
	CreateRuntime record `json:"createRuntime"`
	Poststop      record `json:"poststop"`
	// Bundle is what a runtime with no hooks.d (containerd) put in the container's
	// config.json: no state was sent, so the identity comes from the spec's annotations.
	Bundle *struct {
		Spec struct {
			Annotations map[string]string `json:"annotations"`
			CgroupsPath string            `json:"cgroupsPath"`
		} `json:"spec"`
	} `json:"bundle"`
}

type record struct {
	State struct {
		ID          string            `json:"id"`
		Annotations map[string]string `json:"annotations"`
	} `json:"state"`
	Spec *struct {
		CgroupsPath string `json:"cgroupsPath"`
	} `json:"spec"`
}

// want is what identity should make of a fixture. In it, SandboxID "<self>", "<pod>" and
// "<infra>" stand for the fixture's ids, and PodUID "<uid>" for its pod UID.
type want struct {
	annotations Identity // FromAnnotations: the state alone
	spec        Identity // FromSpec: the state and the bundle's cgroupsPath
}

// fixtureWants is the table: one entry per file in testdata.
func fixtureWants() map[string]want {
	plain := Identity{Runtime: Plain}
	same := func(idn Identity) want { return want{idn, idn} }
	member := func(sandbox string) want {
		idn := Identity{Runtime: Podman, SandboxID: sandbox}
		return want{idn, idn}
	}
	return map[string]want{
		"runc":       {plain, plain},
		"crun":       {plain, plain},
		"podman-run": {plain, plain},
		// All members of a pod are one pod, keyed by the sandbox podman names: the infra, or
		// the pod itself when it has none.
		"podman-pod-member":               member("<infra>"),
		"podman-pod-noinfra-member":       member("<pod>"),
		"podman-pod-noshareparent-member": member("<infra>"),
		// The infra's annotations are a plain container's; its cgroup is the pod's.
		"podman-pod-infra": {plain, Identity{Runtime: Podman, SandboxID: "<self>", Sandbox: true}},
		// Known gap: out of the pod's cgroup, nothing in its spec tells the infra apart.
		"podman-pod-noshareparent-infra": {plain, plain},
		// CRI-O 1.34 (testdata captured through crictl): with kubelet's labels, and with only
		// the sandbox's metadata, which CRI-O keeps in its sandbox name.
		"crio-kubelet":  same(Identity{Runtime: CRIO, PodUID: "<uid>", SandboxID: "<pod>", Namespace: "e2e", PodName: "capture", ContainerName: "app"}),
		"crio-nolabels": same(Identity{Runtime: CRIO, PodUID: "<uid>", SandboxID: "<pod>", Namespace: "e2e", PodName: "capture"}),
		// containerd 2.4.2: its bundles' config.json, sandbox and app container.
		"containerd-sandbox":   same(Identity{Runtime: Containerd, PodUID: "<uid>", SandboxID: "<self>", Namespace: "e2e", PodName: "capture", Sandbox: true}),
		"containerd-container": same(Identity{Runtime: Containerd, PodUID: "<uid>", SandboxID: "<pod>", Namespace: "e2e", PodName: "capture", ContainerName: "app"}),
	}
}

// TestFixtures: what identity makes of what each runtime really sent, at both stages.
func TestFixtures(t *testing.T) {
	t.Parallel()
	for name, want := range fixtureWants() {
		f := readFixture(t, name)
		resolve := func(idn Identity) Identity {
			idn.SandboxID = strings.NewReplacer("<self>", f.IDs.Self, "<pod>", f.IDs.Pod, "<infra>", f.IDs.Infra).Replace(idn.SandboxID)
			idn.PodUID = strings.ReplaceAll(idn.PodUID, "<uid>", f.IDs.PodUID)
			return idn
		}
		recs := []struct {
			stage string
			rec   record
		}{{"createRuntime", f.CreateRuntime}, {"poststop", f.Poststop}}
		if f.Bundle != nil {
			var r record
			r.State.ID, r.State.Annotations = f.IDs.Self, f.Bundle.Spec.Annotations
			r.Spec = &struct {
				CgroupsPath string `json:"cgroupsPath"`
			}{f.Bundle.Spec.CgroupsPath}
			recs = recs[:0]
			recs = append(recs, struct {
				stage string
				rec   record
			}{"bundle", r})
		}
		for _, s := range recs {
			stage, rec := name+" "+s.stage, s.rec
			id, a := rec.State.ID, rec.State.Annotations
			if id != f.IDs.Self {
				t.Fatalf("%s: the state is of %q, the fixture of %q", stage, id, f.IDs.Self)
			}
			if got, err := FromAnnotations(id, a); err != nil || got != resolve(want.annotations) {
				t.Errorf("%s: FromAnnotations: got %+v, %v; want %+v", stage, got, err, resolve(want.annotations))
			}
			if rec.Spec == nil {
				t.Fatalf("%s: the fixture has no spec", stage)
			}
			if got, err := FromSpec(id, a, rec.Spec.CgroupsPath); err != nil || got != resolve(want.spec) {
				t.Errorf("%s: FromSpec: got %+v, %v; want %+v", stage, got, err, resolve(want.spec))
			}
		}
	}
}

// TestFixturesAllTested: every fixture is in TestFixtures' table, and the pod captures hang
// together (a member names the infra that was captured with it).
func TestFixturesAllTested(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	slices.Sort(names)
	if tested := slices.Sorted(maps.Keys(fixtureWants())); !slices.Equal(names, tested) {
		t.Errorf("fixtures %v, table %v", names, tested)
	}
	for _, pair := range [][2]string{{"podman-pod-member", "podman-pod-infra"}, {"podman-pod-noshareparent-member", "podman-pod-noshareparent-infra"}} {
		m, i := readFixture(t, pair[0]), readFixture(t, pair[1])
		if m.IDs.Infra != i.IDs.Self || m.IDs.Pod != i.IDs.Pod {
			t.Errorf("%s was not captured with %s: ids %+v and %+v", pair[0], pair[1], m.IDs, i.IDs)
		}
	}
}

func readFixture(t *testing.T, name string) fixture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}
