package bench_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/bench"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// BenchmarkHook times one createRuntime call of the hook (a container joining its pod's
// group, the common case) against a no-op Go hook binary that only reads its stdin, run
// alternately in the same loop. Target: ≤ 1.5× (see docs/benchmarks.md for what the simulator adds).
func BenchmarkHook(b *testing.B) {
	e2e.BuildBinaries(b)
	sim := resctrlsim.MountT(b, resctrlsim.Options{SettleInterval: -1})
	cfg := writeBenchConfig(b, e2e.Tmpfs(b), sim.Dir)
	sleeper := exec.Command("sleep", "3600")
	if err := sleeper.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	ann := e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app")
	run := func(bin string, args []string, st specs.State) time.Duration {
		cmd := exec.Command(bin, args...)
		cmd.Stdin = bytes.NewReader(mustJSON(b, st))
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v: %s", bin, err, out)
		}
		return time.Since(t0)
	}
	hookArgs := func(stage string) []string { return []string{"--config", cfg, stage} }
	// The pod's group exists: what is timed is a container joining it.
	run(e2e.Binaries.Hook, hookArgs("createRuntime"), specs.State{ID: "first", Pid: sleeper.Process.Pid, Annotations: ann})
	var hookTs, noopTs []time.Duration
	i := 0
	for b.Loop() {
		st := specs.State{ID: fmt.Sprintf("c%d", i), Pid: sleeper.Process.Pid, Annotations: ann}
		noopTs = append(noopTs, run(e2e.Binaries.Noop, nil, st))
		hookTs = append(hookTs, run(e2e.Binaries.Hook, hookArgs("createRuntime"), st))
		b.StopTimer()
		run(e2e.Binaries.Hook, hookArgs("poststop"), specs.State{ID: st.ID, Annotations: ann})
		b.StartTimer()
		i++
	}
	// Medians (bench.Median): a call slowed by another tenant of the VM must not move the ratio.
	hookT, noopT := bench.Median(hookTs), bench.Median(noopTs)
	b.ReportMetric(float64(hookT.Microseconds()), "hook-µs/call")
	b.ReportMetric(float64(noopT.Microseconds()), "noop-µs/call")
	b.ReportMetric(float64(hookT)/float64(noopT), "x-noop")
}

// BenchmarkContainerStart times `runc run` of a trivial container with the hooks in its
// config.json against the same container without them, alternately. Target: ≤ 1.05×. It
// also times a no-op Go hook in the same place: the floor any exec'd hook starts from.
func BenchmarkContainerStart(b *testing.B) {
	e2e.BuildBinaries(b)
	sim := resctrlsim.MountT(b, resctrlsim.Options{SettleInterval: -1})
	cfg := writeBenchConfig(b, e2e.Tmpfs(b), sim.Dir)
	rootfs := e2e.Rootfs(b, nil)
	r := e2e.NewRuntime(b, "runc")
	hooks := func(stage string) specs.Hook {
		return specs.Hook{Path: e2e.Binaries.Hook, Args: []string{"resctrl-mon-hook", "--config", cfg, stage}}
	}
	ann := e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app")
	with := e2e.NewBundle(b, rootfs, e2e.BundleOptions{Args: []string{"sleep", "600"}, Annotations: ann,
		Hooks: &specs.Hooks{CreateRuntime: []specs.Hook{hooks("createRuntime")}, Poststop: []specs.Hook{hooks("poststop")}}})
	without := e2e.NewBundle(b, rootfs, e2e.BundleOptions{Args: []string{"sleep", "600"}, Annotations: ann})
	// The floor: the same hook slot filled by a no-op Go binary.
	noop := e2e.NewBundle(b, rootfs, e2e.BundleOptions{Args: []string{"sleep", "600"}, Annotations: ann,
		Hooks: &specs.Hooks{CreateRuntime: []specs.Hook{{Path: e2e.Binaries.Noop}}}})
	start := func(id string, bundle *e2e.Bundle) time.Duration {
		t0 := time.Now()
		if err := r.Run(id, bundle); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		b.StopTimer()
		if err := r.Delete(id, true); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		return d
	}
	start("warm", with)
	var withTs, withoutTs, noopTs []time.Duration
	i := 0
	for b.Loop() {
		withoutTs = append(withoutTs, start(fmt.Sprintf("plain%d", i), without))
		withTs = append(withTs, start(fmt.Sprintf("hooked%d", i), with))
		noopTs = append(noopTs, start(fmt.Sprintf("noop%d", i), noop))
		i++
	}
	withT, withoutT, noopT := bench.Median(withTs), bench.Median(withoutTs), bench.Median(noopTs)
	b.ReportMetric(float64(withT.Microseconds())/1000, "hooked-ms/run")
	b.ReportMetric(float64(withoutT.Microseconds())/1000, "plain-ms/run")
	b.ReportMetric(float64(withT)/float64(withoutT), "x-plain")
	b.ReportMetric(float64(noopT)/float64(withoutT), "noop-hook-x-plain")
	// The part the hook's own work adds, over what any exec'd Go hook costs.
	b.ReportMetric(float64(withT)/float64(noopT), "x-noop-hook")
}

// writeBenchConfig puts state, snapshots and the log in dir, a tmpfs as in production.
func writeBenchConfig(b *testing.B, dir, root string) string {
	b.Helper()
	path := dir + "/config.yaml"
	text := fmt.Sprintf("resctrlRoot: %s\nresctrlSimulator: true\nstateDir: %s/state\nsnapshotDir: %s/snap\nlog: file:%s/hook.log\nretention: 1h\n", root, dir, dir, dir)
	if err := writeFile(path, text); err != nil {
		b.Fatal(err)
	}
	return path
}

func mustJSON(b *testing.B, v any) []byte {
	b.Helper()
	out, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

func writeFile(path, text string) error { return os.WriteFile(path, []byte(text), 0o644) }
