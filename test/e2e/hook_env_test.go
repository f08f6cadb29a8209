package e2e_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/state"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
	"github.com/resctrl-mon/resctrl-mon/test/simenv"
)

// binaries are built once per test binary: the hook, the forking workload, the no-op hook,
// the CLI, the hooks that put a container in a class and that capture what a runtime
// sends, the runtime wrapper and a no-op one, and the NRI adapter and a no-op NRI plugin.
var binaries struct {
	once                    sync.Once
	dir                     string
	hook, forker, noop      string
	cli, classhook, capture string
	wrapper, noopwrapper    string
	nri, noopnri            string
	err                     error
}

func buildBinaries(t testing.TB) {
	t.Helper()
	binaries.once.Do(func() {
		binaries.dir, binaries.err = os.MkdirTemp("", "resctrl-mon-e2e-bin-")
		if binaries.err != nil {
			return
		}
		for out, pkg := range map[*string]string{&binaries.hook: "../../hooks", &binaries.forker: "./forker", &binaries.noop: "./noophook",
			&binaries.cli: "../../cmd/resctrl-mon", &binaries.classhook: "./classhook", &binaries.capture: "./capturehook",
			&binaries.wrapper: "../../cmd/resctrl-mon-runtime", &binaries.noopwrapper: "./noopwrapper",
			&binaries.nri: "../../nri-adapter", &binaries.noopnri: "./noopnri"} {
			*out = filepath.Join(binaries.dir, filepath.Base(pkg))
			cmd := exec.Command("go", "build", "-trimpath", "-tags", "urfave_cli_no_docs", "-o", *out, pkg)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if b, err := cmd.CombinedOutput(); err != nil {
				binaries.err = fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
				return
			}
		}
	})
	if binaries.err != nil {
		t.Fatal(binaries.err)
	}
}

// hookEnv is one test's resctrl (the simulator), configuration and state.
type hookEnv struct {
	t        testing.TB
	sim      *resctrlsim.Sim
	dir      string
	cfgPath  string
	stateDir string
	snapDir  string
	logPath  string
	rootfs   string
}

func newHookEnv(t testing.TB, simOpts resctrlsim.Options, cfg string) *hookEnv {
	t.Helper()
	buildBinaries(t)
	simOpts.Debug = true
	se := simenv.New(t, simOpts)
	e := &hookEnv{t: t, sim: se.Sim, dir: se.Dir, stateDir: se.Config.StateDir, snapDir: se.Config.SnapshotDir}
	e.cfgPath = filepath.Join(e.dir, "config.yaml")
	e.logPath = filepath.Join(e.dir, "hook.log")
	e.rootfs = e2e.Rootfs(t, map[string]string{"forker": binaries.forker})
	e.config(cfg)
	return e
}

// config (re)writes the configuration every hook call reads; extra is more YAML.
func (e *hookEnv) config(extra string) {
	e.t.Helper()
	text := fmt.Sprintf("resctrlRoot: %s\nstateDir: %s\nsnapshotDir: %s\nlog: file:%s\n%s",
		e.sim.Dir, e.stateDir, e.snapDir, e.logPath, extra)
	if err := os.WriteFile(e.cfgPath, []byte(text), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *hookEnv) hooks() *specs.Hooks {
	h := func(stage string) specs.Hook {
		return specs.Hook{Path: binaries.hook, Args: []string{"resctrl-mon-hook", "--config", e.cfgPath, stage}, Timeout: intp(10)}
	}
	return &specs.Hooks{CreateRuntime: []specs.Hook{h("createRuntime")}, Poststop: []specs.Hook{h("poststop")}}
}

// hooksTimingOut is hooks() with runc's timeout for the createRuntime hook set to seconds,
// for tests that make the hook outlast it (or its own budget).
func (e *hookEnv) hooksTimingOut(seconds int) *specs.Hooks {
	h := e.hooks()
	for i := range h.CreateRuntime {
		h.CreateRuntime[i].Timeout = intp(seconds)
	}
	return h
}

func intp(n int) *int { return &n }

// bundle makes a bundle running args (the forker by default) with CRI-O's annotations for
// a pod and the hook.
func (e *hookEnv) bundle(ann map[string]string, args ...string) *e2e.Bundle {
	if len(args) == 0 {
		args = []string{"forker"}
	}
	return e2e.NewBundle(e.t, e.rootfs, e2e.BundleOptions{Args: args, Annotations: ann, Hooks: e.hooks()})
}

// crioPod is what CRI-O puts on a container of the pod.
func crioPod(uid, sandbox, name string) map[string]string {
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

func sandboxOf(c byte) string { return strings.Repeat(string(c), 64) }

func (e *hookEnv) groupTasks(group string) []int {
	e.t.Helper()
	tids, err := e.sim.Tasks(group)
	if err != nil {
		e.t.Fatalf("tasks of %s: %v", group, err)
	}
	return tids
}

func (e *hookEnv) exists(group string) bool {
	_, err := os.Stat(filepath.Join(e.sim.Dir, group))
	return err == nil
}

func (e *hookEnv) rmid(group string) int {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.sim.Dir, group, "mon_hw_id"))
	if err != nil {
		e.t.Fatal(err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

func (e *hookEnv) records() []state.Record {
	e.t.Helper()
	s, err := state.Open(e.stateDir)
	if err != nil {
		e.t.Fatal(err)
	}
	recs, err := s.List()
	if err != nil {
		e.t.Fatal(err)
	}
	return recs
}

func (e *hookEnv) log() string {
	b, _ := os.ReadFile(e.logPath)
	return string(b)
}

// waitReady waits until the forker in the bundle printed "ready": all its children and
// threads exist.
func waitReady(t testing.TB, b *e2e.Bundle) {
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

// outside returns the tasks of the container's cgroup that are not in the group.
func (e *hookEnv) outside(r *e2e.Runtime, id, group string) (missing, total int) {
	e.t.Helper()
	st, err := r.State(id)
	if err != nil {
		e.t.Fatal(err)
	}
	tids, err := e2e.CgroupTasks(st.Pid)
	if err != nil {
		e.t.Fatal(err)
	}
	in := e.groupTasks(group)
	for _, tid := range tids {
		if !slices.Contains(in, tid) {
			missing++
		}
	}
	return missing, len(tids)
}

// readRecordFile reads the raw record of a group.
func (e *hookEnv) readRecordFile(group string) map[string]any {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.stateDir, "groups", group+".json"))
	if err != nil {
		e.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		e.t.Fatal(err)
	}
	return m
}

// lines counts lines of the hook log holding all of words.
func (e *hookEnv) logLines(words ...string) int {
	n := 0
	sc := bufio.NewScanner(strings.NewReader(e.log()))
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

// logFor returns the hook log's lines about one container.
func (e *hookEnv) logFor(id string) string {
	var out []string
	for _, l := range strings.Split(e.log(), "\n") {
		if strings.Contains(l, "container="+id+" ") || strings.Contains(l, "subject="+id+" ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// placedOf counts how many of tids are in group.
func (e *hookEnv) placedOf(group string, tids []int) int {
	in := e.groupTasks(group)
	n := 0
	for _, tid := range tids {
		if slices.Contains(in, tid) {
			n++
		}
	}
	return n
}

// endCRIPod stops and removes a CRI pod (CRI-O, containerd), wanting its group and every
// registry entry gone when the removal returns: with retention 0 the pod ends within rmp
// (CRI-O's poststop hooks, NRI's RemovePodSandbox).
func (e *hookEnv) endCRIPod(t *testing.T, c *e2e.CRI, podID, group string) {
	t.Helper()
	if err := c.StopPod(podID); err != nil {
		t.Fatal(err)
	}
	if err := c.RemovePod(podID); err != nil {
		t.Fatal(err)
	}
	if e.exists(group) {
		t.Errorf("the group outlived the pod (retention 0)\n%s", e.log())
	}
	if recs := e.records(); len(recs) != 0 {
		t.Errorf("registry entries left: %+v", recs)
	}
}

// endPodmanPod removes a podman pod and waits until its group and every registry entry are
// gone: the infra container's poststop hook ends the pod, however long the retention.
func (e *hookEnv) endPodmanPod(t *testing.T, p *e2e.PodmanRunner, podID, group string) {
	t.Helper()
	if err := p.RemovePod(podID); err != nil {
		t.Fatal(err)
	}
	if err := poll.Until(10*time.Second, func() error {
		if e.exists(group) || len(e.records()) != 0 {
			return fmt.Errorf("group or registry entry still there")
		}
		return nil
	}); err != nil {
		t.Errorf("%v after podman pod rm (the infra's poststop ends the pod):\n%s", err, e.log())
	}
}

// installShippedHooks writes the shipped createRuntime and poststop hooks.d JSON into dir
// (a runtime's hooks directory), naming this environment's config.
func (e *hookEnv) installShippedHooks(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{"resctrl-mon-createruntime.json", "resctrl-mon-poststop.json"} {
		installHookJSON(t, name, dir, e.cfgPath)
	}
}

// criPlaced reads the tasks in the cgroup of a CRI container's init (CRI-O, containerd) and
// counts how many of them are in group.
func (e *hookEnv) criPlaced(c *e2e.CRI, id, group string) (placed int, tids []int) {
	e.t.Helper()
	pid, err := c.PID(id)
	if err != nil {
		e.t.Fatal(err)
	}
	tids, err = e2e.CgroupTasks(pid)
	if err != nil {
		e.t.Fatal(err)
	}
	// Listing the root group makes the simulator take in its queued fork events, so the
	// threads just listed in the cgroup are known to it.
	_ = e.groupTasks("")
	return e.placedOf(group, tids), tids
}

// wantForkersPlaced wants group there and every task of each forker container (ids by
// name) in it, and logs how many are: the forker makes 4 children and a grandchild and locks
// 4 threads, at least 12 tasks.
func (e *hookEnv) wantForkersPlaced(t *testing.T, c *e2e.CRI, group string, ids map[string]string) {
	t.Helper()
	if !e.exists(group) {
		t.Fatalf("no group %s\nthe hook or adapter said:\n%s", group, e.log())
	}
	for _, name := range slices.Sorted(maps.Keys(ids)) {
		placed, tids := e.criPlaced(c, ids[name], group)
		t.Logf("%s: placed %d of %d in %s", name, placed, len(tids), group)
		if placed != len(tids) || len(tids) < 12 {
			t.Errorf("%s: %d of %d tasks in %s\nthe hook or adapter said:\n%s", name, placed, len(tids), group, e.log())
		}
	}
}

// startCRIOWithHooks starts a CRI-O whose hooks_dir holds the shipped hooks naming this
// environment's config, with the test's rootfs unless o names one.
func (e *hookEnv) startCRIOWithHooks(t *testing.T, o e2e.CRIOOptions) *e2e.CRIO {
	t.Helper()
	o.HooksDir = t.TempDir()
	e.installShippedHooks(t, o.HooksDir)
	if o.Rootfs == "" {
		o.Rootfs = e.rootfs
	}
	return e2e.StartCRIO(t, o)
}

// criExecForker starts a forker in a running CRI container with crictl exec (ExecSync, what
// exec probes use) and waits until it is ready. ExecSync returns when sh does; the forker it
// leaves behind stays in the container and says "ready" in a file once all its children and
// threads exist.
func criExecForker(t *testing.T, c *e2e.CRI, id string) {
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

// runForkers runs a forker container of each name in a CRI pod (CRI-O, containerd), waits until each is ready
// and returns their ids by name.
func runForkers(t *testing.T, e *hookEnv, c *e2e.CRI, pod *e2e.Pod, names ...string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, name := range names {
		id, err := c.RunContainer(pod, e2e.TestImage, e2e.ContainerSpec{Name: name, Command: []string{"forker"}})
		if err != nil {
			t.Fatalf("%v\nthe hook or adapter said:\n%s", err, e.log())
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
