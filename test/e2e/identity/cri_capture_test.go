package identity_test

import (
	"encoding/json"
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
	"github.com/resctrl-mon/resctrl-mon/test/e2e/capture"
)

const crioCaptureHow = "test/e2e/capturehook registered in CRI-O's hooks_dir at every stage that runs " +
	"on the host, one hooks.d entry per stage; it keeps the state from stdin as written and what the " +
	"bundle's config.json says of the container's pod and role. CRI-O ran with the test harness's " +
	"private configuration (StartCRIO: cgroupfs, vfs, runc and conmon from Debian, host-network " +
	"pods, no CNI, infra container dropped). " +
	"Rewritten by `go test -tags urfave_cli_no_docs -run TestCaptureCRIO ./test/e2e/identity -args -update-fixtures`."

const containerdCaptureHow = "containerd runs no hooks.d: each container's bundle config.json " +
	"($STATE/io.containerd.runtime.v2.task/k8s.io/<id>/config.json) read while it ran, which is " +
	"what runc was given and what a hook injected into the spec (NRI) would be shown, kept as " +
	"test/e2e/capturehook keeps a config.json (capture.SpecOf). containerd " +
	"ran with the test harness's private configuration (StartContainerd: version 3, overlayfs, " +
	"Debian's runc, host-network pods, no CNI, restrict_oom_score_adj). " +
	"Rewritten by `go test -tags urfave_cli_no_docs -run TestCaptureContainerd ./test/e2e/identity -args -update-fixtures`."

// TestCaptureCRIO runs pods under a real CRI-O with capturehook at every host stage and checks
// what it sends: which stages run on which crictl command (none for the pod's sandbox, none
// for exec, poststop at rm and never at stop), and the pod's identity on a container of a
// pod with kubelet's labels and of one without. It compares with lib/identity/testdata's
// crio-*.json (or rewrites them with -update-fixtures).
func TestCaptureCRIO(t *testing.T) {
	t.Parallel()
	e2e.BuildBinaries(t)
	hooks := e2e.NewCapturer(t, e2e.Binaries.Capture, e2e.HostStages...)
	crio := e2e.StartCRIO(t, e2e.CRIOOptions{HooksDir: hooks.HooksDir(t)})
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
			f := fixture{Case: tc.name, IDs: fixtureIDs{PodUID: tc.uid}}
			f.Captured = captured{Versions: versions, How: crioCaptureHow, Configs: map[string]json.RawMessage{}}
			before, err := hooks.Calls()
			if err != nil {
				t.Fatal(err)
			}
			seen := len(before)
			step := func(cmd string, do func() error) []capture.Record {
				t.Helper()
				if err := do(); err != nil {
					t.Fatalf("%s: %v\n%s", cmd, err, crio.DaemonLog())
				}
				calls, err := hooks.Calls()
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

			all, err := hooks.Calls()
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
			f.CreateRuntime, f.Poststop = cr, ps
			checkCRIOIdentity(t, f, tc.kubelet)

			f.About = "A container of a CRI-O pod with kubelet's labels on the sandbox and the container " +
				"(io.kubernetes.pod.{uid,name,namespace}, io.kubernetes.container.name), as kubelet makes them."
			if !tc.kubelet {
				f.About = "A container of a CRI-O pod without kubelet's labels: the sandbox's metadata (name, namespace, uid) only."
			}
			f.Captured.Configs["POD_JSON"] = readConfig(t, crio.CRI, "pod")
			f.Captured.Configs["CONTAINER_JSON"] = readConfig(t, crio.CRI, "ctr-app")
			compareOrWriteFixture(t, f, criView)
		})
	}

	// A pod sharing one PID namespace needs CRI-O's infra container even with drop_infra_ctr.
	// Where it runs, no hook may run for it; on machines where root lacks CAP_SYS_RESOURCE runc
	// cannot start it (oom_score_adj -998), and still no hook may have run.
	t.Run("crio-infra", func(t *testing.T) {
		before, err := hooks.Calls()
		if err != nil {
			t.Fatal(err)
		}
		pod, runErr := crio.RunPod(e2e.PodSpec{Name: "infra", Namespace: "e2e", UID: "6a1f3c2e-0000-4000-8000-0000000000c3", Kubelet: true, PodPIDNamespace: true})
		after, err := hooks.Calls()
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
func checkCRIOIdentity(t *testing.T, f fixture, kubelet bool) {
	t.Helper()
	st, err := f.CreateRuntime.DecodeState()
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
	ps, err := f.Poststop.DecodeState()
	if err != nil {
		t.Fatal(err)
	}
	if ps.Status != specs.StateStopped || ps.Pid != 0 || ps.ID != f.IDs.Self {
		t.Errorf("poststop state: %s", f.Poststop.State)
	}
}

// TestCaptureContainerd runs a pod with kubelet's labels under a real containerd and reads the
// bundles of its sandbox (pause) container and of an app container, and compares them with
// lib/identity/testdata's containerd-*.json (or rewrites them with -update-fixtures).
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
	how := captured{Versions: versions, How: containerdCaptureHow,
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
			spec, err := capture.SpecOf(raw)
			if err != nil {
				t.Fatal(err)
			}
			a := spec.Annotations
			if a[identity.ContainerdContainerType] != tc.typ || a[identity.ContainerdSandboxID] != pod.ID || a[identity.ContainerdPodUID] != uid {
				t.Errorf("bundle annotations: type %q, sandbox %q, uid %q; want %s, %s, %s", a[identity.ContainerdContainerType],
					a[identity.ContainerdSandboxID], a[identity.ContainerdPodUID], tc.typ, pod.ID, uid)
			}
			f := fixture{Case: tc.name, About: tc.about, Captured: how,
				IDs:    fixtureIDs{Self: tc.self, Pod: pod.ID, Infra: pod.ID, PodUID: uid},
				Bundle: &capture.Record{Stage: "bundle", Spec: spec}}
			compareOrWriteFixture(t, f, criView)
		})
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
func criView(t *testing.T, f fixture) map[string]string {
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
	for _, r := range []*capture.Record{f.CreateRuntime, f.Poststop, f.Bundle} {
		if r == nil {
			continue
		}
		if r.State != nil {
			st, err := r.DecodeState()
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

func findCall(calls []capture.Record, stage, id string) *capture.Record {
	for i := range calls {
		if calls[i].Stage == stage && calls[i].ID == id {
			return &calls[i]
		}
	}
	return nil
}

func stagesOf(calls []capture.Record) []string {
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
