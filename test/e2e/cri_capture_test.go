package e2e_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
)

var updateCRIFixtures = flag.Bool("update-cri-fixtures", false,
	"TestCaptureCRIO, TestCaptureContainerd: rewrite lib/identity/testdata/{crio,containerd}-*.json from what the runtimes send, instead of comparing")

// criFixtureDir holds what each runtime sent, one file per case.
const criFixtureDir = "../../lib/identity/testdata"

// criFixture is one file of criFixtureDir: one container as its CRI runtime showed it. The
// layout is that of the podman, runc and crun fixtures beside it (case, about, captured, ids,
// and a record per hook stage holding the state as the runtime wrote it and the bundle's
// config.json as it was then), plus what only a CRI runtime has: the crictl configs, the
// hook calls each crictl command caused (timeline), and for containerd, which runs no
// hooks.d, the bundle read from its state directory instead of hook records.
type criFixture struct {
	Case          string      `json:"case"`
	About         string      `json:"about"`
	Captured      criCaptured `json:"captured"`
	IDs           criIDs      `json:"ids"`
	Timeline      []criStep   `json:"timeline,omitempty"`
	CreateRuntime *criRecord  `json:"createRuntime,omitempty"`
	Poststop      *criRecord  `json:"poststop,omitempty"`
	Bundle        *criRecord  `json:"bundle,omitempty"`
}

type criCaptured struct {
	Versions []string                   `json:"versions"`
	Commands []string                   `json:"commands"`
	Configs  map[string]json.RawMessage `json:"configs"`
	How      string                     `json:"how"`
}

// criIDs are the container's own ID, its pod's sandbox ID and the UID the pod was given.
type criIDs struct {
	Self   string `json:"self"`
	Pod    string `json:"pod,omitempty"`
	Infra  string `json:"infra,omitempty"`
	PodUID string `json:"podUID,omitempty"`
}

// criStep is one crictl command and the hook calls it caused ("stage <id>").
type criStep struct {
	Command string   `json:"command"`
	Hooks   []string `json:"hooks"`
}

// criRecord is one hook call (or, for containerd, the bundle) as the fixtures keep it.
type criRecord struct {
	Stage     string          `json:"stage"`
	State     json.RawMessage `json:"state,omitempty"`
	Spec      *criSpec        `json:"spec,omitempty"`
	SpecError string          `json:"specError,omitempty"`
}

// criSpec is the part of config.json that could tell a container's pod and role.
type criSpec struct {
	Annotations map[string]string      `json:"annotations"`
	Args        []string               `json:"args"`
	Hostname    string                 `json:"hostname"`
	CgroupsPath string                 `json:"cgroupsPath"`
	Namespaces  []specs.LinuxNamespace `json:"namespaces"`
}

func decodeCRISpec(raw []byte) (*criSpec, error) {
	var s specs.Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("decode config.json: %w", err)
	}
	cs := &criSpec{Annotations: s.Annotations, Hostname: s.Hostname}
	if s.Process != nil {
		cs.Args = s.Process.Args
	}
	if s.Linux != nil {
		cs.CgroupsPath, cs.Namespaces = s.Linux.CgroupsPath, s.Linux.Namespaces
	}
	return cs, nil
}

func criRecordOf(c e2e.StageCall) *criRecord {
	r := &criRecord{Stage: c.Stage, State: c.State}
	if c.Config == nil {
		r.SpecError = "config.json was not readable from the hook"
		return r
	}
	spec, err := decodeCRISpec(c.Config)
	if err != nil {
		r.SpecError = err.Error()
	}
	r.Spec = spec
	return r
}

const crioCaptureHow = "test/e2e's StageLogger (a shell script) registered in CRI-O's hooks_dir at every " +
	"stage, one hooks.d entry per stage; it keeps the state from stdin as written and copies the " +
	"bundle's config.json. CRI-O ran with the test harness's private configuration (StartCRIO: " +
	"cgroupfs, vfs, runc and conmon from Debian, host-network pods, no CNI, infra container dropped). " +
	"Rewritten by `go test -tags urfave_cli_no_docs -run 'TestCapture(CRIO|Containerd)' ./test/e2e -args -update-cri-fixtures`."

const containerdCaptureHow = "containerd runs no hooks.d: each container's bundle config.json " +
	"($STATE/io.containerd.runtime.v2.task/k8s.io/<id>/config.json) read while it ran, which is " +
	"what runc was given and what a hook injected into the spec (NRI) would be shown. containerd " +
	"ran with the test harness's private configuration (StartContainerd: version 3, overlayfs, " +
	"Debian's runc, host-network pods, no CNI, restrict_oom_score_adj). " +
	"Rewritten by `go test -tags urfave_cli_no_docs -run 'TestCapture(CRIO|Containerd)' ./test/e2e -args -update-cri-fixtures`."

// TestCaptureCRIO runs pods under a real CRI-O with a logging hook at every stage and checks
// what it sends: which stages run on which crictl command (none for the pod's sandbox, none
// for exec, poststop at rm and never at stop), and the pod's identity on a container of a
// pod with kubelet's labels and of one without. It compares with lib/identity/testdata's
// crio-*.json (or rewrites them with -update-cri-fixtures).
func TestCaptureCRIO(t *testing.T) {
	t.Parallel()
	log := e2e.NewStageLogger(t)
	crio := e2e.StartCRIO(t, e2e.CRIOOptions{HooksDir: log.HooksDir})
	versions := []string{criVersion(t, crio.CRI), binVersion(t, "crio"), binVersion(t, "runc"), binVersion(t, "conmon"), binVersion(t, "crictl")}

	for _, tc := range []struct {
		name    string
		kubelet bool
		uid     string
	}{
		{"crio-kubelet", true, "6a1f3c2e-0000-4000-8000-0000000000c1"},
		{"crio-nolabels", false, "6a1f3c2e-0000-4000-8000-0000000000c2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := e2e.PodSpec{Name: "capture", Namespace: "e2e", UID: tc.uid, Kubelet: tc.kubelet}
			f := criFixture{Case: tc.name, IDs: criIDs{PodUID: tc.uid}}
			f.Captured = criCaptured{Versions: versions, How: crioCaptureHow, Configs: map[string]json.RawMessage{}}
			before, err := log.Calls()
			if err != nil {
				t.Fatal(err)
			}
			seen := len(before)
			step := func(cmd string, do func() error) []e2e.StageCall {
				t.Helper()
				if err := do(); err != nil {
					t.Fatalf("%s: %v\n%s", cmd, err, crio.DaemonLog())
				}
				calls, err := log.Calls()
				if err != nil {
					t.Fatal(err)
				}
				fresh := calls[seen:]
				seen = len(calls)
				st := criStep{Command: cmd, Hooks: []string{}}
				for _, c := range fresh {
					st.Hooks = append(st.Hooks, c.Stage+" "+c.ID)
				}
				f.Timeline = append(f.Timeline, st)
				f.Captured.Commands = append(f.Captured.Commands, cmd)
				return fresh
			}

			var pod *e2e.Pod
			if calls := step("crictl runp $POD_JSON", func() (err error) { pod, err = crio.RunPod(spec); return err }); len(calls) != 0 {
				t.Errorf("runp ran hooks (the infra container is dropped, so there is nothing to run them for): %v", stagesOf(calls))
			}
			f.IDs.Pod = pod.ID
			var id string
			created := step("crictl create <pod> $CONTAINER_JSON $POD_JSON", func() (err error) {
				id, err = crio.CreateContainer(pod, e2e.TestImage, e2e.ContainerSpec{Name: "app", Command: []string{"sleep", "600"}})
				return err
			})
			f.IDs.Self = id
			started := step("crictl start <self>", func() error { return crio.Start(id) })
			if calls := step("crictl exec --sync <self> true", func() error { _, err := crio.Exec(id, "true"); return err }); len(calls) != 0 {
				t.Errorf("exec ran hooks: %v", stagesOf(calls))
			}
			if calls := step("crictl stop --timeout 0 <self>", func() error { return crio.Stop(id) }); slices.Contains(stagesOf(calls), "poststop") {
				t.Errorf("poststop ran at stop: %v", stagesOf(calls))
			}
			removed := step("crictl rm <self>", func() error { return crio.Remove(id) })
			step("crictl stopp <pod>", func() error { return crio.StopPod(pod.ID) })
			step("crictl rmp <pod>", func() error { return crio.RemovePod(pod.ID) })

			all, err := log.Calls()
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range all {
				if c.ID == pod.ID {
					t.Errorf("a hook ran for the pod's sandbox: %s", c.Stage)
				}
			}
			cr := findCall(append(created, started...), "createRuntime", id)
			ps := findCall(removed, "poststop", id)
			if cr == nil || ps == nil {
				t.Fatalf("want createRuntime at create or start and poststop at rm; timeline: %+v", f.Timeline)
			}
			f.CreateRuntime, f.Poststop = criRecordOf(*cr), criRecordOf(*ps)
			checkCRIOIdentity(t, f, tc.kubelet)

			f.About = "A container of a CRI-O pod with kubelet's labels on the sandbox and the container " +
				"(io.kubernetes.pod.{uid,name,namespace}, io.kubernetes.container.name), as kubelet makes them."
			if !tc.kubelet {
				f.About = "A container of a CRI-O pod without kubelet's labels: the sandbox's metadata (name, namespace, uid) only."
			}
			f.Captured.Configs["POD_JSON"] = readConfig(t, crio.CRI, "pod")
			f.Captured.Configs["CONTAINER_JSON"] = readConfig(t, crio.CRI, "ctr-app")
			compareOrWriteCRIFixture(t, f)
		})
	}

	// A pod sharing one PID namespace needs CRI-O's infra container even with drop_infra_ctr.
	// Where it runs, no hook may run for it; on machines where root lacks CAP_SYS_RESOURCE runc
	// cannot start it (oom_score_adj -998), and still no hook may have run.
	t.Run("crio-infra", func(t *testing.T) {
		before, err := log.Calls()
		if err != nil {
			t.Fatal(err)
		}
		pod, runErr := crio.RunPod(e2e.PodSpec{Name: "infra", Namespace: "e2e", UID: "6a1f3c2e-0000-4000-8000-0000000000c3", Kubelet: true, PodPIDNamespace: true})
		after, err := log.Calls()
		if err != nil {
			t.Fatal(err)
		}
		if fresh := after[len(before):]; len(fresh) != 0 {
			t.Errorf("hooks ran for a pod sandbox with an infra container: %v", stagesOf(fresh))
		}
		if runErr != nil {
			t.Logf("the infra container did not start here (no hook ran before that): %v", runErr)
			return
		}
		t.Logf("the infra container %s ran; no hook ran for it", pod.ID)
	})
}

// checkCRIOIdentity checks what the pod's identity rests on: kubelet's labels become
// annotations of the same names; without them only CRI-O's own keys name the pod.
func checkCRIOIdentity(t *testing.T, f criFixture, kubelet bool) {
	t.Helper()
	st, err := decodeState(f.CreateRuntime.State)
	if err != nil {
		t.Fatal(err)
	}
	a := st.Annotations
	if a[identity.CRIOSandboxID] != f.IDs.Pod || a[identity.CRIOContainerType] != "container" {
		t.Errorf("createRuntime state: sandbox %q, type %q; want %q, container", a[identity.CRIOSandboxID], a[identity.CRIOContainerType], f.IDs.Pod)
	}
	if kubelet {
		if a[identity.CRIOPodUID] != f.IDs.PodUID || a[identity.CRIOContainerName] != "app" {
			t.Errorf("createRuntime state with kubelet's labels: uid %q, container name %q", a[identity.CRIOPodUID], a[identity.CRIOContainerName])
		}
	} else {
		if v, ok := a[identity.CRIOPodUID]; ok {
			t.Errorf("createRuntime state without kubelet's labels has a pod UID %q", v)
		}
		if !strings.Contains(a["io.kubernetes.cri-o.SandboxName"], f.IDs.PodUID) {
			t.Errorf("the sandbox name %q does not hold the pod's UID", a["io.kubernetes.cri-o.SandboxName"])
		}
	}
	ps, err := decodeState(f.Poststop.State)
	if err != nil {
		t.Fatal(err)
	}
	if ps.Status != specs.StateStopped || ps.Pid != 0 || ps.ID != f.IDs.Self {
		t.Errorf("poststop state: %s", f.Poststop.State)
	}
}

// TestCaptureContainerd runs a pod with kubelet's labels under a real containerd and reads the
// bundles of its sandbox (pause) container and of an app container, and compares them with
// lib/identity/testdata's containerd-*.json (or rewrites them with -update-cri-fixtures).
func TestCaptureContainerd(t *testing.T) {
	t.Parallel()
	c := e2e.StartContainerd(t, e2e.ContainerdOptions{})
	versions := []string{criVersion(t, c.CRI), binVersion(t, "runc"), binVersion(t, "crictl")}
	uid := "6a1f3c2e-0000-4000-8000-0000000000d1"
	pod, err := c.RunPod(e2e.PodSpec{Name: "capture", Namespace: "e2e", UID: uid, Kubelet: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, c.DaemonLog())
	}
	id, err := c.RunContainer(pod, e2e.TestImage, e2e.ContainerSpec{Name: "app", Command: []string{"sleep", "600"}})
	if err != nil {
		t.Fatalf("%v\n%s", err, c.DaemonLog())
	}
	captured := criCaptured{Versions: versions, How: containerdCaptureHow,
		Commands: []string{"crictl runp $POD_JSON", "crictl create <pod> $CONTAINER_JSON $POD_JSON", "crictl start <self>"},
		Configs:  map[string]json.RawMessage{"POD_JSON": readConfig(t, c.CRI, "pod"), "CONTAINER_JSON": readConfig(t, c.CRI, "ctr-app")}}
	for _, tc := range []struct {
		name, self, typ, about string
	}{
		{"containerd-sandbox", pod.ID, "sandbox", "The sandbox (pause) container of a containerd pod with kubelet's labels; its id is the pod's sandbox id."},
		{"containerd-container", id, "container", "An app container of a containerd pod with kubelet's labels (containerd's annotations come from the sandbox's metadata, not from labels)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, _, err := c.BundleSpec(tc.self)
			if err != nil {
				t.Fatal(err)
			}
			spec, err := decodeCRISpec(raw)
			if err != nil {
				t.Fatal(err)
			}
			a := spec.Annotations
			if a[identity.ContainerdContainerType] != tc.typ || a[identity.ContainerdSandboxID] != pod.ID || a[identity.ContainerdPodUID] != uid {
				t.Errorf("bundle annotations: type %q, sandbox %q, uid %q; want %s, %s, %s", a[identity.ContainerdContainerType],
					a[identity.ContainerdSandboxID], a[identity.ContainerdPodUID], tc.typ, pod.ID, uid)
			}
			f := criFixture{Case: tc.name, About: tc.about, Captured: captured,
				IDs:    criIDs{Self: tc.self, Pod: pod.ID, Infra: pod.ID, PodUID: uid},
				Bundle: &criRecord{Stage: "bundle", Spec: spec}}
			compareOrWriteCRIFixture(t, f)
		})
	}
}

// compareOrWriteCRIFixture rewrites the fixture under -update-cri-fixtures; otherwise it
// compares what identity rests on with the stored one.
func compareOrWriteCRIFixture(t *testing.T, got criFixture) {
	t.Helper()
	path := filepath.Join(criFixtureDir, got.Case+".json")
	if *updateCRIFixtures {
		b, err := json.MarshalIndent(got, "", "\t")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (make it with -update-cri-fixtures)", err)
	}
	var want criFixture
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	gotView, wantView := criView(t, got), criView(t, want)
	for _, k := range slices.Sorted(maps.Keys(wantView)) {
		if gotView[k] != wantView[k] {
			t.Errorf("%s: %s: the runtime sent %q, the fixture has %q", got.Case, k, gotView[k], wantView[k])
		}
	}
	if t.Failed() {
		t.Logf("%s: if the runtime changed, rewrite the fixtures with -update-cri-fixtures and review the identity code", path)
	}
}

// criViewKeys are the annotations compared between a capture and its fixture: what identity
// reads, and CRI-O's own names of the container and its sandbox.
var criViewKeys = []string{
	identity.CRIOPodUID, identity.CRIOPodNamespace, identity.CRIOPodName, identity.CRIOContainerName,
	identity.CRIOSandboxID, identity.CRIOContainerType, identity.CRIOLabels,
	"io.kubernetes.cri-o.ContainerID", "io.kubernetes.cri-o.SandboxName", "io.kubernetes.cri-o.Name",
	identity.ContainerdPodUID, identity.ContainerdSandboxID, identity.ContainerdContainerType,
	identity.ContainerdPodNamespace, identity.ContainerdPodName, identity.ContainerdContainerName,
}

// criView is what a fixture says that must not drift, with its IDs and UID written as
// <self>, <pod> and <uid> so that two captures compare: the timeline, the set of annotation
// keys, the values of criViewKeys, the state's status and whether it has a pid, and what
// identity makes of the annotations.
func criView(t *testing.T, f criFixture) map[string]string {
	t.Helper()
	norm := func(s string) string {
		for from, to := range map[string]string{f.IDs.Self: "<self>", f.IDs.Pod: "<pod>", f.IDs.PodUID: "<uid>"} {
			if from != "" {
				s = strings.ReplaceAll(s, from, to)
			}
		}
		return s
	}
	view := map[string]string{}
	var steps []string
	for _, s := range f.Timeline {
		steps = append(steps, s.Command+": "+strings.Join(s.Hooks, ", "))
	}
	view["timeline"] = norm(strings.Join(steps, "; "))
	annotations := func(what string, a map[string]string) {
		view[what+" annotation keys"] = strings.Join(slices.Sorted(maps.Keys(a)), " ")
		for _, k := range criViewKeys {
			v, ok := a[k]
			if !ok {
				v = "(absent)"
			}
			view[what+" "+k] = norm(v)
		}
	}
	for _, r := range []*criRecord{f.CreateRuntime, f.Poststop, f.Bundle} {
		if r == nil {
			continue
		}
		if r.State != nil {
			st, err := decodeState(r.State)
			if err != nil {
				t.Fatalf("%s: %v", f.Case, err)
			}
			view[r.Stage+" state status"] = string(st.Status)
			view[r.Stage+" state has pid"] = fmt.Sprint(st.Pid > 0)
			annotations(r.Stage+" state", st.Annotations)
			idn, err := identity.FromAnnotations(st.ID, st.Annotations)
			view[r.Stage+" identity"] = norm(fmt.Sprintf("%+v %v", idn, err))
		}
		if r.Spec != nil {
			annotations(r.Stage+" spec", r.Spec.Annotations)
			view[r.Stage+" spec args"] = strings.Join(r.Spec.Args, " ")
			if r.State == nil {
				idn, err := identity.FromAnnotations(f.IDs.Self, r.Spec.Annotations)
				view[r.Stage+" identity"] = norm(fmt.Sprintf("%+v %v", idn, err))
			}
		}
	}
	return view
}

func decodeState(raw json.RawMessage) (specs.State, error) {
	var st specs.State
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, fmt.Errorf("decode state %s: %w", raw, err)
	}
	return st, nil
}

func findCall(calls []e2e.StageCall, stage, id string) *e2e.StageCall {
	for i := range calls {
		if calls[i].Stage == stage && calls[i].ID == id {
			return &calls[i]
		}
	}
	return nil
}

func stagesOf(calls []e2e.StageCall) []string {
	var s []string
	for _, c := range calls {
		s = append(s, c.Stage)
	}
	return s
}

// readConfig returns the last JSON config the CRI client wrote of a kind ("pod", "ctr-app").
func readConfig(t *testing.T, c *e2e.CRI, kind string) json.RawMessage {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(c.ConfigDir, kind+"-*.json"))
	if err != nil || len(matches) == 0 {
		t.Fatalf("no %s config in %s: %v", kind, c.ConfigDir, err)
	}
	slices.Sort(matches)
	b, err := os.ReadFile(matches[len(matches)-1])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// criVersion is what `crictl version` says of the runtime, on one line.
func criVersion(t *testing.T, c *e2e.CRI) string {
	t.Helper()
	out, err := c.Command("version")
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	for line := range strings.Lines(string(out)) {
		if line = strings.Join(strings.Fields(line), " "); line != "" {
			fields = append(fields, line)
		}
	}
	return strings.Join(fields, "; ")
}

// binVersion is the first line of `NAME --version`, NAME found on PATH, in /usr/sbin or in
// the runtimes' cache. crictl built with go install says "unknown": its version is in the
// cache directory's name.
func binVersion(t *testing.T, name string) string {
	t.Helper()
	if name == "crictl" {
		dir := filepath.Base(filepath.Dir(e2e.RuntimeBins(t, "crictl")))
		return "crictl " + strings.TrimPrefix(dir, "crictl-") + " (test/runtimes/crictl.sh)"
	}
	bin := name
	if _, err := exec.LookPath(bin); err != nil {
		bin = "/usr/sbin/" + name
		for _, rt := range []string{"crio", "containerd"} {
			if p := filepath.Join(e2e.RuntimeBins(t, rt), name); fileExists(p) {
				bin = p
			}
		}
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
