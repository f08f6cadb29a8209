package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/registry"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
	"github.com/resctrl-mon/resctrl-mon/test/simenv"
)

// HookEnv is one test's resctrl (the simulator), configuration and state.
type HookEnv struct {
	T        testing.TB
	Sim      *resctrlsim.Sim
	Dir      string
	CfgPath  string
	StateDir string
	SnapDir  string
	LogPath  string
	Rootfs   string
}

// NewHookEnv builds the binaries, mounts a simulator (with mon_hw_id, to see RMIDs) and writes
// a config pointing at it with cfg appended; the rootfs holds the forker.
func NewHookEnv(t testing.TB, simOpts resctrlsim.Options, cfg string) *HookEnv {
	t.Helper()
	BuildBinaries(t)
	simOpts.Debug = true
	se := simenv.New(t, simOpts)
	e := &HookEnv{T: t, Sim: se.Sim, Dir: se.Dir, StateDir: se.Config.StateDir, SnapDir: se.Config.SnapshotDir}
	e.CfgPath = filepath.Join(e.Dir, "config.yaml")
	e.LogPath = filepath.Join(e.Dir, "hook.log")
	e.Rootfs = Rootfs(t, map[string]string{"forker": Binaries.Forker})
	e.Config(cfg)
	return e
}

// Config (re)writes the configuration every hook call reads; extra is more YAML.
func (e *HookEnv) Config(extra string) {
	e.T.Helper()
	text := fmt.Sprintf("resctrlRoot: %s\nresctrlSimulator: true\nstateDir: %s\nsnapshotDir: %s\nlog: file:%s\n%s",
		e.Sim.Dir, e.StateDir, e.SnapDir, e.LogPath, extra)
	if err := os.WriteFile(e.CfgPath, []byte(text), 0o644); err != nil {
		e.T.Fatal(err)
	}
}

// Hooks lists the hook at createRuntime and poststop, reading this environment's config.
func (e *HookEnv) Hooks() *specs.Hooks {
	h := func(stage string) specs.Hook {
		return specs.Hook{Path: Binaries.Hook, Args: []string{"resctrl-mon-hook", "--config", e.CfgPath, stage}, Timeout: IntPtr(10)}
	}
	return &specs.Hooks{CreateRuntime: []specs.Hook{h("createRuntime")}, Poststop: []specs.Hook{h("poststop")}}
}

// HooksTimingOut is Hooks() with runc's timeout for the createRuntime hook set to seconds,
// for tests that make the hook outlast it (or its own budget).
func (e *HookEnv) HooksTimingOut(seconds int) *specs.Hooks {
	h := e.Hooks()
	for i := range h.CreateRuntime {
		h.CreateRuntime[i].Timeout = IntPtr(seconds)
	}
	return h
}

// IntPtr is a hook timeout.
func IntPtr(n int) *int { return &n }

// Bundle makes a bundle running args (the forker by default) with CRI-O's annotations for
// a pod and the hook.
func (e *HookEnv) Bundle(ann map[string]string, args ...string) *Bundle {
	if len(args) == 0 {
		args = []string{"forker"}
	}
	return NewBundle(e.T, e.Rootfs, BundleOptions{Args: args, Annotations: ann, Hooks: e.Hooks()})
}

// CRIOPod is what CRI-O puts on a container of the pod.
func CRIOPod(uid, sandbox, name string) map[string]string {
	return map[string]string{
		"io.kubernetes.pod.uid":             uid,
		"io.kubernetes.pod.namespace":       "e2e",
		"io.kubernetes.pod.name":            "pod",
		"io.kubernetes.container.name":      name,
		"io.kubernetes.cri-o.SandboxID":     sandbox,
		"io.kubernetes.cri-o.ContainerType": "container",
		"io.kubernetes.cri-o.Labels":        `{"io.kubernetes.pod.uid":"` + uid + `"}`,
	}
}

// SandboxOf is a 64-character sandbox id made of c.
func SandboxOf(c byte) string { return strings.Repeat(string(c), 64) }

// GroupTasks lists the tasks of a resctrl group, as the simulator has them.
func (e *HookEnv) GroupTasks(group string) []int {
	e.T.Helper()
	tids, err := e.Sim.Tasks(group)
	if err != nil {
		e.T.Fatalf("tasks of %s: %v", group, err)
	}
	return tids
}

// Exists says whether the resctrl group is there.
func (e *HookEnv) Exists(group string) bool {
	_, err := os.Stat(filepath.Join(e.Sim.Dir, group))
	return err == nil
}

// RMID is the group's RMID (mon_hw_id).
func (e *HookEnv) RMID(group string) int {
	e.T.Helper()
	b, err := os.ReadFile(filepath.Join(e.Sim.Dir, group, "mon_hw_id"))
	if err != nil {
		e.T.Fatal(err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// Records lists the state directory's records.
func (e *HookEnv) Records() []registry.Record {
	e.T.Helper()
	s, err := registry.Open(e.StateDir)
	if err != nil {
		e.T.Fatal(err)
	}
	recs, err := s.List()
	if err != nil {
		e.T.Fatal(err)
	}
	return recs
}

// Log is what the hook and the other binaries logged so far.
func (e *HookEnv) Log() string {
	b, _ := os.ReadFile(e.LogPath)
	return string(b)
}

// WaitReady waits until the forker in the bundle printed "ready": all its children and
// threads exist.
func WaitReady(t testing.TB, b *Bundle) {
	t.Helper()
	err := poll.Until(20*time.Second, func() error {
		out, _ := os.ReadFile(b.StdoutPath())
		if !strings.Contains(string(out), "ready") {
			errOut, _ := os.ReadFile(b.StderrPath())
			return fmt.Errorf("forker not ready; stderr: %s", errOut)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Outside returns the tasks of the container's cgroup that are not in the group.
func (e *HookEnv) Outside(r *Runtime, id, group string) (missing, total int) {
	e.T.Helper()
	st, err := r.State(id)
	if err != nil {
		e.T.Fatal(err)
	}
	tids, err := CgroupTasks(st.Pid)
	if err != nil {
		e.T.Fatal(err)
	}
	in := e.GroupTasks(group)
	for _, tid := range tids {
		if !slices.Contains(in, tid) {
			missing++
		}
	}
	return missing, len(tids)
}

// ReadRecordFile reads the raw record of a group.
func (e *HookEnv) ReadRecordFile(group string) map[string]any {
	e.T.Helper()
	b, err := os.ReadFile(filepath.Join(e.StateDir, "groups", group+".json"))
	if err != nil {
		e.T.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		e.T.Fatal(err)
	}
	return m
}

// LogLines counts the lines of the hook log holding all of words.
func (e *HookEnv) LogLines(words ...string) int {
	n := 0
	sc := bufio.NewScanner(strings.NewReader(e.Log()))
	for sc.Scan() {
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(sc.Text(), w)
		}
		if ok {
			n++
		}
	}
	return n
}

// LogFor returns the hook log's lines about one container.
func (e *HookEnv) LogFor(id string) string {
	var out []string
	for _, l := range strings.Split(e.Log(), "\n") {
		if strings.Contains(l, "container="+id+" ") || strings.Contains(l, "subject="+id+" ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// PlacedOf counts how many of tids are in group.
func (e *HookEnv) PlacedOf(group string, tids []int) int {
	in := e.GroupTasks(group)
	n := 0
	for _, tid := range tids {
		if slices.Contains(in, tid) {
			n++
		}
	}
	return n
}

// EndCRIPod stops and removes a CRI pod (CRI-O, containerd), wanting its group and every
// registry entry gone when the removal returns: with retention 0 the pod ends within rmp
// (CRI-O's poststop hooks, NRI's RemovePodSandbox).
func (e *HookEnv) EndCRIPod(t *testing.T, c *CRI, podID, group string) {
	t.Helper()
	if err := c.StopPod(podID); err != nil {
		t.Fatal(err)
	}
	if err := c.RemovePod(podID); err != nil {
		t.Fatal(err)
	}
	if e.Exists(group) {
		t.Errorf("the group outlived the pod (retention 0)\n%s", e.Log())
	}
	if recs := e.Records(); len(recs) != 0 {
		t.Errorf("registry entries left: %+v", recs)
	}
}

// EndPodmanPod removes a podman pod and waits until its group and every registry entry are
// gone: the infra container's poststop hook ends the pod, however long the retention.
func (e *HookEnv) EndPodmanPod(t *testing.T, p *PodmanRunner, podID, group string) {
	t.Helper()
	if err := p.RemovePod(podID); err != nil {
		t.Fatal(err)
	}
	if err := poll.Until(10*time.Second, func() error {
		if e.Exists(group) || len(e.Records()) != 0 {
			return fmt.Errorf("group or registry entry still there")
		}
		return nil
	}); err != nil {
		t.Errorf("%v after podman pod rm (the infra's poststop ends the pod):\n%s", err, e.Log())
	}
}

// InstallShippedHooks writes the shipped createRuntime and poststop hooks.d JSON into dir
// (a runtime's hooks directory), naming this environment's config.
func (e *HookEnv) InstallShippedHooks(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{"resctrl-mon-createruntime.json", "resctrl-mon-poststop.json"} {
		InstallHookJSON(t, name, dir, e.CfgPath)
	}
}

// CRIPlaced reads the tasks in the cgroup of a CRI container's init (CRI-O, containerd) and
// counts how many of them are in group.
func (e *HookEnv) CRIPlaced(c *CRI, id, group string) (placed int, tids []int) {
	e.T.Helper()
	pid, err := c.PID(id)
	if err != nil {
		e.T.Fatal(err)
	}
	tids, err = CgroupTasks(pid)
	if err != nil {
		e.T.Fatal(err)
	}
	// Listing the root group makes the simulator take in its queued fork events, so the
	// threads just listed in the cgroup are known to it.
	_ = e.GroupTasks("")
	return e.PlacedOf(group, tids), tids
}

// WantForkersPlaced wants group there and every task of each forker container (ids by
// name) in it, and logs how many are: the forker makes 4 children and a grandchild and locks
// 5 threads (7 with the main one and sysmon), at least 12 tasks.
func (e *HookEnv) WantForkersPlaced(t *testing.T, c *CRI, group string, ids map[string]string) {
	t.Helper()
	if !e.Exists(group) {
		t.Fatalf("no group %s\nthe hook or adapter said:\n%s", group, e.Log())
	}
	for _, name := range slices.Sorted(maps.Keys(ids)) {
		placed, tids := e.CRIPlaced(c, ids[name], group)
		t.Logf("%s: placed %d of %d in %s", name, placed, len(tids), group)
		if placed != len(tids) || len(tids) < 12 {
			t.Errorf("%s: %d of %d tasks in %s\nthe hook or adapter said:\n%s", name, placed, len(tids), group, e.Log())
		}
	}
}

// StartCRIOWithHooks starts a CRI-O whose hooks_dir holds the shipped hooks naming this
// environment's config, with the test's rootfs unless o names one.
func (e *HookEnv) StartCRIOWithHooks(t *testing.T, o CRIOOptions) *CRIO {
	t.Helper()
	o.HooksDir = t.TempDir()
	e.InstallShippedHooks(t, o.HooksDir)
	if o.Rootfs == "" {
		o.Rootfs = e.Rootfs
	}
	return StartCRIO(t, o)
}

// CRIExecForker starts a forker in a running CRI container with crictl exec (ExecSync, what
// exec probes use) and waits until it is ready. ExecSync returns when sh does; the forker it
// leaves behind stays in the container and says "ready" in a file once all its children and
// threads exist.
func CRIExecForker(t *testing.T, c *CRI, id string) {
	t.Helper()
	if _, err := c.Exec(id, "sh", "-c", "forker >/tmp/exec.out 2>&1 &"); err != nil {
		t.Fatal(err)
	}
	err := poll.Until(20*time.Second, func() error {
		out, err := c.Exec(id, "cat", "/tmp/exec.out")
		if err == nil && !strings.Contains(string(out), "ready") {
			err = fmt.Errorf("the exec'd forker is not ready: %q", out)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// RunForkers runs a forker container of each name in a CRI pod (CRI-O, containerd), waits until each is ready
// and returns their ids by name.
func RunForkers(t *testing.T, e *HookEnv, c *CRI, pod *Pod, names ...string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, name := range names {
		id, err := c.RunContainer(pod, TestImage, ContainerSpec{Name: name, Command: []string{"forker"}})
		if err != nil {
			t.Fatalf("%v\nthe hook or adapter said:\n%s", err, e.Log())
		}
		ids[name] = id
	}
	for _, name := range names {
		if err := c.WaitLog(pod, name, "ready", 20*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// PlainBundle is a bundle with the pod's annotations and no hooks: what containerd or a
// CRI-O runtime handler without hooks.d hands the runtime.
func (e *HookEnv) PlainBundle(ann map[string]string, args ...string) *Bundle {
	if len(args) == 0 {
		args = []string{"forker"}
	}
	return NewBundle(e.T, e.Rootfs, BundleOptions{Args: args, Annotations: ann})
}
