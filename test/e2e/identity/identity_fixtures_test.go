package identity_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/e2e/capture"
)

const captureHow = "test/e2e/capturehook as createRuntime and poststop hooks (podman: a hooks.d " +
	"directory given with --hooks-dir; runc, crun: config.json); rewritten by " +
	"`go test -tags urfave_cli_no_docs -run TestIdentityFixtures ./test/e2e/identity -args -update-fixtures`. " +
	"podman ran with private state ($STATE) and a containers.conf (CONTAINERS_CONF) setting " +
	"default_ulimits that this machine allows; $ROOTFS is a busybox-static rootfs."

// captureScenarios make containers the way a user would, with capturehook as their hook,
// and return one fixture per container of interest.
var captureScenarios = []struct {
	name string
	run  func(t *testing.T, c *e2e.Capturer, rootfs string) []fixture
}{
	{"runc", func(t *testing.T, c *e2e.Capturer, rootfs string) []fixture {
		return captureDirect(t, c, rootfs, "runc")
	}},
	{"crun", func(t *testing.T, c *e2e.Capturer, rootfs string) []fixture {
		return captureDirect(t, c, rootfs, "crun")
	}},
	{"podman-run", capturePodmanRun},
	{"podman-pod", func(t *testing.T, c *e2e.Capturer, rootfs string) []fixture {
		return capturePodmanPod(t, c, rootfs, "podman-pod", e2e.PodOptions{})
	}},
	{"podman-pod-noinfra", func(t *testing.T, c *e2e.Capturer, rootfs string) []fixture {
		return capturePodmanPod(t, c, rootfs, "podman-pod-noinfra", e2e.PodOptions{NoInfra: true})
	}},
	{"podman-pod-noshareparent", func(t *testing.T, c *e2e.Capturer, rootfs string) []fixture {
		return capturePodmanPod(t, c, rootfs, "podman-pod-noshareparent", e2e.PodOptions{Flags: []string{"--share-parent=false"}})
	}},
}

// TestIdentityFixtures captures again what each runtime sends and compares what identity
// depends on (the annotations it reads, podman's cgroup path, and what it makes of them) with
// lib/identity/testdata, so the fixtures cannot silently drift from the runtimes. With
// -update-fixtures it rewrites them instead.
func TestIdentityFixtures(t *testing.T) {
	e2e.BuildBinaries(t)
	rootfs := e2e.Rootfs(t, nil)
	for _, sc := range captureScenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			for _, got := range sc.run(t, e2e.NewCapturer(t, e2e.Binaries.Capture), rootfs) {
				compareOrWriteFixture(t, got, identityView)
			}
		})
	}
}

// identityView is what identity depends on in a fixture, with the fixture's ids written as
// <self>, <pod> and <infra> so that two captures compare.
func identityView(t *testing.T, f fixture) map[string]string {
	t.Helper()
	norm := func(s string) string {
		for id, name := range map[string]string{f.IDs.Self: "<self>", f.IDs.Pod: "<pod>", f.IDs.Infra: "<infra>"} {
			if id != "" {
				s = strings.ReplaceAll(s, id, name)
			}
		}
		return s
	}
	view := map[string]string{}
	for _, rec := range []*capture.Record{f.CreateRuntime, f.Poststop} {
		if rec == nil {
			t.Fatalf("%s: no createRuntime or no poststop record", f.Case)
		}
		st, err := rec.DecodeState()
		if err != nil {
			t.Fatalf("%s: %v", f.Case, err)
		}
		if st.ID != f.IDs.Self {
			t.Fatalf("%s: the %s state is of %q, not of %q", f.Case, rec.Stage, st.ID, f.IDs.Self)
		}
		for _, k := range identity.Keys() {
			v, ok := st.Annotations[k]
			if !ok {
				v = "(absent)"
			}
			view[rec.Stage+" annotation "+k] = norm(v)
		}
		idn, err := identity.FromAnnotations(st.ID, st.Annotations)
		view[rec.Stage+" identity from annotations"] = norm(fmt.Sprintf("%+v %v", idn, err))
		if rec.Spec == nil {
			view[rec.Stage+" identity from spec"] = "(config.json unreadable)"
			continue
		}
		idn, err = identity.FromSpec(st.ID, st.Annotations, rec.Spec.CgroupsPath)
		view[rec.Stage+" identity from spec"] = norm(fmt.Sprintf("%+v %v", idn, err))
		if strings.HasPrefix(f.Case, "podman") {
			// The tests' own bundles (runc, crun) have random cgroup paths; podman's follow its
			// rule, which FromSpec reads.
			view[rec.Stage+" cgroupsPath"] = norm(rec.Spec.CgroupsPath)
		}
	}
	return view
}

func captureDirect(t *testing.T, c *e2e.Capturer, rootfs, runtime string) []fixture {
	r := e2e.PreparedRuntime(t, runtime)
	id := "capture-" + runtime
	b := e2e.NewBundle(t, rootfs, e2e.BundleOptions{Args: []string{"sleep", "600"}, Hooks: c.Hooks(t)})
	if err := r.Run(id, b); err != nil {
		t.Fatal(err)
	}
	if err := r.Delete(id, true); err != nil {
		t.Fatal(err)
	}
	f := fixture{
		Case:  runtime,
		About: runtime + " run directly on a bundle with no annotations of its own (NewBundle adds crun's run.oci.hooks.* keys): no pod.",
		Captured: captured{Versions: []string{version(t, r.Bin)}, How: captureHow,
			Commands: []string{
				runtime + " --root $ROOT run --detach --bundle $BUNDLE " + id,
				runtime + " --root $ROOT delete --force " + id,
			}},
		IDs: fixtureIDs{Self: id},
	}
	f.CreateRuntime, f.Poststop = waitCapture(t, c, id)
	return []fixture{f}
}

func capturePodmanRun(t *testing.T, c *e2e.Capturer, rootfs string) []fixture {
	pm := e2e.Podman(t)
	id, err := pm.Run(e2e.PodmanRunOptions{HooksDir: c.HooksDir(t), Rootfs: rootfs, Args: []string{"sleep", "600"}, Detach: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := pm.Remove(id); err != nil {
		t.Fatal(err)
	}
	f := fixture{
		Case:     "podman-run",
		About:    "A container of no pod: plain `podman run`.",
		Captured: podmanCaptured(t, pm, rootfs, c),
		IDs:      fixtureIDs{Self: id},
	}
	f.CreateRuntime, f.Poststop = waitCapture(t, c, id)
	return []fixture{f}
}

// capturePodmanPod makes a pod with o, runs one member in it and removes the pod: a fixture
// of the member, and of the infra container if the pod has one.
func capturePodmanPod(t *testing.T, c *e2e.Capturer, rootfs, name string, o e2e.PodOptions) []fixture {
	pm := e2e.Podman(t)
	hooksDir := c.HooksDir(t)
	o.Name = name
	pod, err := pm.CreatePod(o)
	if err != nil {
		t.Fatal(err)
	}
	member, err := pm.Run(e2e.PodmanRunOptions{HooksDir: hooksDir, Pod: pod.Name, Rootfs: rootfs, Args: []string{"sleep", "600"}, Detach: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := pm.RemovePod(pod.ID); err != nil {
		t.Fatal(err)
	}
	how := podmanCaptured(t, pm, rootfs, c)
	var out []fixture
	if pod.InfraID != "" {
		f := fixture{
			Case:     name + "-infra",
			About:    "The infra container of a pod made by `" + podCreate(o) + "`, started by podman with the pod's first member.",
			Captured: how,
			IDs:      fixtureIDs{Self: pod.InfraID, Pod: pod.ID, Infra: pod.InfraID},
		}
		f.CreateRuntime, f.Poststop = waitCapture(t, c, pod.InfraID)
		out = append(out, f)
	}
	f := fixture{
		Case:     name + "-member",
		About:    "A container run with `podman run --pod` in a pod made by `" + podCreate(o) + "`.",
		Captured: how,
		IDs:      fixtureIDs{Self: member, Pod: pod.ID, Infra: pod.InfraID},
	}
	f.CreateRuntime, f.Poststop = waitCapture(t, c, member)
	return append(out, f)
}

// podCreate is the pod create command of o, as a user would type it.
func podCreate(o e2e.PodOptions) string {
	f := append([]string{"podman", "pod", "create"}, o.Flags...)
	if o.NoInfra {
		f = append(f, "--infra=false")
	}
	return strings.Join(f, " ")
}

func podmanCaptured(t *testing.T, pm *e2e.PodmanRunner, rootfs string, c *e2e.Capturer) captured {
	var cmds []string
	for _, h := range pm.History() {
		if strings.Contains(h, " inspect ") {
			continue
		}
		h = strings.ReplaceAll(h, rootfs, "$ROOTFS")
		cmds = append(cmds, strings.ReplaceAll(h, c.Dir, "$RECORDS"))
	}
	// The hooks directory is a temporary one: its path says nothing.
	for i, h := range cmds {
		if _, after, ok := strings.Cut(h, "--hooks-dir "); ok {
			dir, _, _ := strings.Cut(after, " ")
			cmds[i] = strings.ReplaceAll(h, dir, "$HOOKS_D")
		}
	}
	return captured{Versions: []string{version(t, pm.Bin), version(t, "runc")}, Commands: cmds, How: captureHow}
}

// waitCapture returns the createRuntime and poststop records of container id.
func waitCapture(t *testing.T, c *e2e.Capturer, id string) (cr, ps *capture.Record) {
	t.Helper()
	crRec, err := c.Wait(id, "createRuntime")
	if err != nil {
		t.Fatal(err)
	}
	psRec, err := c.Wait(id, "poststop")
	if err != nil {
		t.Fatal(err)
	}
	return &crRec, &psRec
}

// version is the first line of `bin --version`; Debian keeps runc in /usr/sbin, which a
// non-login shell's PATH may lack.
func version(t *testing.T, bin string) string {
	t.Helper()
	if _, err := exec.LookPath(bin); err != nil && !strings.ContainsRune(bin, '/') {
		bin = "/usr/sbin/" + bin
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return line
}
