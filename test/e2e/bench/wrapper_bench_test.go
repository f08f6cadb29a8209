package bench_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/test/bench"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// BenchmarkWrapper times `runc run` and `runc exec` through resctrl-mon-runtime against runc
// alone, and against a no-op Go wrapper that only execs runc (the floor any exec'd wrapper
// starts from), alternately in the same loop. Target: ≤ 1.05× each.
//
// Every container runs the hook: runc alone and the no-op wrapper run a bundle that lists it
// (as hooks.d would), the wrapper a bundle without hooks, restored before each run, so the
// wrapper lists them every time. What the ratios show is the wrapper's own part: reading its
// config, the command line and config.json, writing config.json (run), or finding the pod's
// group and joining it (exec).
func BenchmarkWrapper(b *testing.B) {
	e2e.BuildBinaries(b)
	sim := resctrlsim.MountT(b, resctrlsim.Options{SettleInterval: -1})
	dir := e2e.Tmpfs(b)
	cfg := writeBenchConfig(b, dir, sim.Dir)
	plain := e2e.NewRuntime(b, "runc")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = fmt.Fprintf(f, "runtime: %s\nruntimeHook: %s\n", plain.Bin, e2e.Binaries.Hook)
		err = errorsJoin(err, f.Close())
	}
	if err != nil {
		b.Fatal(err)
	}
	wrapper := plain.Via(e2e.Binaries.Wrapper, config.ConfigEnv+"="+cfg)
	noop := plain.Via(e2e.Binaries.NoopWrapper, "E2E_REAL_RUNTIME="+plain.Bin)
	// The same no-op wrapper joining the pod's group and nothing else: the floor for an exec
	// that must join (the join costs the simulator a FUSE write and its bookkeeping, which
	// the kernel does in the kernel).
	joinOnly := plain.Via(e2e.Binaries.NoopWrapper, "E2E_REAL_RUNTIME="+plain.Bin,
		"E2E_JOIN_TASKS="+filepath.Join(sim.Dir, "mon_groups", e2e.PodUIDA, "tasks"))
	rootfs := e2e.Rootfs(b, nil)
	ann := e2e.CRIOPod(e2e.PodUIDA, e2e.SandboxOf('a'), "app")
	hook := func(stage string) specs.Hook {
		return specs.Hook{Path: e2e.Binaries.Hook, Args: []string{"resctrl-mon-hook", "--config", cfg, stage}, Timeout: e2e.IntPtr(10)}
	}
	args := []string{"sleep", "600"}
	// The bundles on tmpfs, as containerd's and CRI-O's are (/run): on a journaling disk a
	// rename over config.json starts its writeback, which would be timed too.
	listed := e2e.NewBundle(b, rootfs, e2e.BundleOptions{Args: args, Annotations: ann, Parent: dir,
		Hooks: &specs.Hooks{CreateRuntime: []specs.Hook{hook("createRuntime")}, Poststop: []specs.Hook{hook("poststop")}}})
	bare := e2e.NewBundle(b, rootfs, e2e.BundleOptions{Args: args, Annotations: ann, Parent: dir})

	run := func(r *e2e.Runtime, id string, bundle *e2e.Bundle) time.Duration {
		b.StopTimer()
		if bundle == bare {
			if err := bare.Save(); err != nil { // no hooks again
				b.Fatal(err)
			}
		}
		b.StartTimer()
		t0 := time.Now()
		if err := r.Run(id, bundle); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		b.StopTimer()
		if err := plain.Delete(id, true); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		return d
	}
	// Three execs a turn: one is short, and the machine's noise is not.
	execTrue := func(r *e2e.Runtime, ctr string) time.Duration {
		t0 := time.Now()
		for range 3 {
			if _, stderr, err := r.Command("exec", ctr, "true"); err != nil {
				b.Fatalf("%s exec: %v: %s", r.Name(), err, stderr)
			}
		}
		return time.Since(t0) / 3
	}
	// The container execs go into, placed in its pod's group (retention keeps the group
	// between the runs of the loop).
	if err := plain.Run("target", listed); err != nil {
		b.Fatal(err)
	}
	// And one that has no group: an exec into it through the wrapper is the wrapper's own
	// cost (its start, the config, the registry's answer) without the join.
	if err := plain.Run("loner", bare); err != nil {
		b.Fatal(err)
	}
	run(wrapper, "warm", bare)
	// Medians, not means: one container start slowed by another tenant of this shared VM
	// would move a mean by more than the 5% being measured.
	var runPlain, runWrap, runNoop, execPlain, execWrap, execNoop, execLone, execJoin []time.Duration
	i := 0
	for b.Loop() {
		// The three in turn, in a rotating order: whatever the one before leaves behind
		// (a cgroup being torn down, a cold cache) falls on each alike.
		steps := []func(){
			func() {
				runPlain = append(runPlain, run(plain, fmt.Sprintf("p%d", i), listed))
				execPlain = append(execPlain, execTrue(plain, "target"))
			},
			func() {
				runWrap = append(runWrap, run(wrapper, fmt.Sprintf("w%d", i), bare))
				execWrap = append(execWrap, execTrue(wrapper, "target"))
				execLone = append(execLone, execTrue(wrapper, "loner"))
			},
			func() {
				runNoop = append(runNoop, run(noop, fmt.Sprintf("n%d", i), listed))
				execNoop = append(execNoop, execTrue(noop, "target"))
				execJoin = append(execJoin, execTrue(joinOnly, "target"))
			},
		}
		for k := range steps {
			steps[(i+k)%len(steps)]()
		}
		i++
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for _, r := range []struct {
		what              string
		plain, wrap, noop time.Duration
	}{
		{"run", bench.Median(runPlain), bench.Median(runWrap), bench.Median(runNoop)},
		{"exec", bench.Median(execPlain), bench.Median(execWrap), bench.Median(execNoop)},
	} {
		b.ReportMetric(ms(r.plain), r.what+"-runc-ms")
		b.ReportMetric(ms(r.wrap), r.what+"-wrapper-ms")
		b.ReportMetric(float64(r.wrap)/float64(r.plain), r.what+"-x-runc")
		b.ReportMetric(float64(r.noop)/float64(r.plain), r.what+"-noopwrapper-x-runc")
		b.ReportMetric(float64(r.wrap)/float64(r.noop), r.what+"-x-noopwrapper")
	}
	b.ReportMetric(float64(bench.Median(execLone))/float64(bench.Median(execNoop)), "exec-nogroup-x-noopwrapper")
	b.ReportMetric(float64(bench.Median(execJoin))/float64(bench.Median(execNoop)), "exec-joinonly-x-noopwrapper")
	b.ReportMetric(float64(bench.Median(execWrap))/float64(bench.Median(execJoin)), "exec-x-joinonly")
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
