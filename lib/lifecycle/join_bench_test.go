package lifecycle

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
	"github.com/resctrl-mon/resctrl-mon/test/bench"
	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// BenchmarkJoinLifecycle times the library's part of a container's life in a pod that has
// its group (Place joining it, then the two departures NRI sends), with the state on tmpfs,
// on the in-memory resctrl against the simulator, alternately in one run: the first is what
// the library itself costs (a kernel's resctrl answers in microseconds), the difference is
// what the simulator's FUSE round trips add. It is the part of the NRI adapter's own time
// (BenchmarkContainerLifecycle in nri-adapter/nriplugin) that is resctrl-mon's code.
func BenchmarkJoinLifecycle(b *testing.B) {
	shm, err := os.MkdirTemp("/dev/shm", "resctrl-mon-bench-")
	if err != nil {
		b.Skipf("needs a tmpfs at /dev/shm: %v", err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(shm) })
	root := bench.Resctrl(b, resctrlsim.Options{SettleInterval: -1})
	manager := func(name, root string, rs resctrlfs.Groups) *Manager {
		cfg := config.Default()
		cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir = root, filepath.Join(shm, name), ""
		cfg.Retention = config.Duration(time.Hour)
		m, err := NewWith(cfg, slog.New(slog.DiscardHandler), rs)
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
	onKernel, err := kernel.Open(root, resctrlfs.CheckSimulator, ValidGroupName, canonicalGroupName, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	fake := resctrlfake.New(8)
	fake.ForgetTasks()
	onSim, inMemory := manager("sim", root, onKernel), manager("fake", "/nonexistent-resctrl", fake)
	idn, err := identity.FromAnnotations("first", crio(podA, sbA))
	if err != nil {
		b.Fatal(err)
	}
	// Each lifecycle places a new process, as each container has its own init (its /proc
	// entries are new to the kernel's caches too), held asleep as a runtime holds it.
	life := func(m *Manager, id string) time.Duration {
		pid, end := proctest.Asleep(b)
		t0 := time.Now()
		if out, err := m.Place(Placement{ContainerID: id, Pid: pid, Pod: idn, Annotations: crio(podA, sbA)}); err != nil || out.Action != vocab.Joined {
			b.Fatalf("%s: %+v, %v", id, out, err)
		}
		d := time.Since(t0)
		end() // the container ends before its departures, as under NRI
		t1 := time.Now()
		for range 2 { // StopContainer, RemoveContainer
			if _, err := m.Leave(Departure{ContainerID: id, Pod: idn}); err != nil {
				b.Fatal(err)
			}
		}
		return d + time.Since(t1)
	}
	// The pod's group, made by its first container, which stays.
	pid, _ := proctest.Asleep(b)
	for _, m := range []*Manager{onSim, inMemory} {
		out, err := m.Place(Placement{ContainerID: "first", Pid: pid, Pod: idn, Annotations: crio(podA, sbA)})
		if err != nil {
			b.Fatal(err)
		}
		if m == onSim {
			bench.RemoveGroups(b, root, filepath.Base(out.Group))
		}
	}
	var simT, memT []time.Duration
	i := 0
	for b.Loop() {
		simT = append(simT, life(onSim, fmt.Sprintf("s%d", i)))
		memT = append(memT, life(inMemory, fmt.Sprintf("m%d", i)))
		i++
	}
	b.ReportMetric(float64(bench.Median(memT).Microseconds()), "library-µs/lifecycle")
	b.ReportMetric(float64(bench.Median(simT).Microseconds()), "on-sim-µs/lifecycle")
	b.ReportMetric(float64(bench.Median(simT))/float64(bench.Median(memT)), "sim-x-library")
}
