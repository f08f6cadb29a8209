package nriplugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/bench"
	"github.com/resctrl-mon/resctrl-mon/test/nritest"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// The adapter's time per container lifecycle, events in (from NRI's real runtime side, over
// its socket) and the simulator out. The same events to a plugin that does nothing, on a
// runtime of its own, alternate with the adapter's in the same run: the difference of the
// medians is the adapter's own time. Target: under 0.5 ms.
//
// BenchmarkPodLifecycle: a pod of one container, from RunPodSandbox to RemovePodSandbox: the
// group made (an RMID), the init placed, .begin and .end written, the group removed.
func BenchmarkPodLifecycle(b *testing.B) {
	benchLifecycles(b, true)
}

// BenchmarkContainerLifecycle: a container of a pod whose group exists (a pod's second
// container, a restart): StartContainer, PostStartContainer, StopContainer, RemoveContainer.
func BenchmarkContainerLifecycle(b *testing.B) {
	benchLifecycles(b, false)
}

func benchLifecycles(b *testing.B, wholePod bool) {
	root := bench.Resctrl(b, resctrlsim.Options{NumRMIDs: 1024, SettleInterval: -1})
	// The state and snapshots on tmpfs, as the defaults put them (/run): here /tmp and /run
	// are on disk, where every record's fsync would be measured instead of the adapter.
	dir, err := os.MkdirTemp("/dev/shm", "resctrl-mon-bench-")
	if err != nil {
		b.Skipf("needs a tmpfs at /dev/shm: %v", err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	cfg := config.Default()
	cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir, cfg.Log = root, filepath.Join(dir, "state"), filepath.Join(dir, "snap"), "stderr"
	cfg.ResctrlSimulator = true
	if wholePod {
		cfg.Retention = 0
	}
	adapterRT, noopRT := newRuntimeTB(b), newRuntimeTB(b)
	log := discard()
	if path := os.Getenv("BENCH_LOG"); path != "" { // per-event durations, for a breakdown
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = f.Close() })
		log = slog.New(slog.NewTextHandler(f, nil))
	}
	p, err := New(cfg, log, kernel.Open)
	if err != nil {
		b.Fatal(err)
	}
	serve(b, adapterRT, func(ctx context.Context) error {
		return p.Run(ctx, Options{Socket: adapterRT.sock, SweepEvery: time.Hour})
	})
	serve(b, noopRT, func(ctx context.Context) error {
		s, err := stub.New(nritest.Noop{}, stub.WithPluginName("noop"), stub.WithPluginIdx("10"), stub.WithSocketPath(noopRT.sock))
		if err != nil {
			return err
		}
		return s.Run(ctx)
	})
	const uid = "0f8b2c1e-1111-2222-3333-444455556666"
	sb := fmt.Sprintf("%064x", 1<<40)
	if !wholePod {
		bench.RemoveGroups(b, root, uid)
		// The pod's first container keeps running, so its group stays.
		for _, rt := range []*fakeRuntime{adapterRT, noopRT} {
			_ = oneLifecycle(b, rt, uid, sb, "first", false, true)
		}
	}
	var adapter, baseline []time.Duration
	b.ResetTimer()
	for i := range b.N {
		id := fmt.Sprintf("c%06d", i)
		podUID, podSB := uid, sb
		if wholePod {
			podUID, podSB = fmt.Sprintf("%08x-0000-4000-8000-000000000000", i), fmt.Sprintf("%064x", i)
		}
		adapter = append(adapter, oneLifecycle(b, adapterRT, podUID, podSB, id, wholePod, false))
		baseline = append(baseline, oneLifecycle(b, noopRT, podUID, podSB, id, wholePod, false))
	}
	b.StopTimer()
	a, n := bench.Median(adapter), bench.Median(baseline)
	b.ReportMetric(float64(a.Microseconds()), "µs/lifecycle")
	b.ReportMetric(float64(n.Microseconds()), "noop-µs/lifecycle")
	b.ReportMetric(float64((a - n).Microseconds()), "own-µs/lifecycle")
	b.ReportMetric(float64(a)/float64(n), "x-noop")
	if recs, _ := p.m.Store().List(); wholePod && len(recs) != 0 {
		b.Errorf("groups left: %d", len(recs))
	}
}

// oneLifecycle runs one container's events and returns the time spent in them; starting and
// ending the init process (a runtime's work) is not counted. With wholePod the pod's sandbox
// is run before and removed after; keep leaves the container running.
func oneLifecycle(b *testing.B, rt *fakeRuntime, uid, sb, id string, wholePod, keep bool) time.Duration {
	b.Helper()
	pid, end := proctest.Asleep(b)
	pod := &api.PodSandbox{Id: sb, Uid: uid, Namespace: "default", Name: "bench"}
	ctr := &api.Container{Id: id, PodSandboxId: sb, Name: "app", Pid: uint32(pid), State: api.ContainerState_CONTAINER_CREATED}
	ctx := context.Background()
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	t0 := time.Now()
	if wholePod || keep {
		must(rt.r.RunPodSandbox(ctx, &api.RunPodSandboxRequest{Pod: pod}))
	}
	must(rt.r.StartContainer(ctx, &api.StartContainerRequest{Pod: pod, Container: ctr}))
	ctr.State = api.ContainerState_CONTAINER_RUNNING
	must(rt.r.PostStartContainer(ctx, &api.PostStartContainerRequest{Pod: pod, Container: ctr}))
	d := time.Since(t0)
	if keep {
		return d
	}
	end()
	ctr.State = api.ContainerState_CONTAINER_STOPPED
	t1 := time.Now()
	_, err := rt.r.StopContainer(ctx, &api.StopContainerRequest{Pod: pod, Container: ctr})
	must(err)
	must(rt.r.RemoveContainer(ctx, &api.RemoveContainerRequest{Pod: pod, Container: ctr}))
	if wholePod {
		must(rt.r.RemovePodSandbox(ctx, &api.RemovePodSandboxRequest{Pod: pod}))
	}
	return d + time.Since(t1)
}

// serve runs a plugin against rt until the benchmark ends, once it has synchronised.
func serve(b *testing.B, rt *fakeRuntime, run func(context.Context) error) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			b.Errorf("plugin: %v", err)
		}
	})
	select {
	case <-rt.synced:
	case err := <-done:
		b.Fatalf("plugin stopped: %v", err)
	case <-time.After(syncDeadline):
		b.Fatal("plugin did not synchronise")
	}
	// Registration completes after the sync callback returns: an event with plugin sync
	// blocked waits for it.
	rt.r.BlockPluginSync().Unblock()
}
