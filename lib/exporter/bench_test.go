package exporter_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/lib/identity"
	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/lifecycle"
	"github.com/resctrl-mon/resctrl-mon/lib/psi"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// manyPods mounts a simulator (2 L3 domains, 1 PERF_PKG) and places one sleeping process in
// n pods' groups in turn, so each pod has a record, a group, a container and cgroups with
// pressure files. It returns the configuration.
func manyPods(b *testing.B, n int) config.Config {
	b.Helper()
	sim := resctrlsim.MountT(b, resctrlsim.Options{PerfPkgDomains: 1, L3Domains: 2, NumRMIDs: n + 16})
	cfg := config.Default()
	cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir = sim.Dir, filepath.Join(b.TempDir(), "state"), ""
	cfg.ResctrlSimulator = true
	cfg.Retention = config.Duration(time.Hour)
	m, err := lifecycle.New(cfg, slog.New(slog.DiscardHandler), kernel.Open)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := range n {
		uid := fmt.Sprintf("6a1f3c2e-0000-4000-8000-%012d", i)
		a := map[string]string{identity.CRIOPodUID: uid, identity.CRIOSandboxID: fmt.Sprintf("%064d", i),
			identity.CRIOContainerType: "container", identity.CRIOPodNamespace: "bench", identity.CRIOPodName: "pod-" + strconv.Itoa(i)}
		idn, err := identity.FromAnnotations("c"+strconv.Itoa(i), a)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Place(lifecycle.Placement{ContainerID: "c" + strconv.Itoa(i), Pid: cmd.Process.Pid, Pod: idn, Annotations: a}); err != nil {
			b.Fatal(err)
		}
	}
	return cfg
}

// BenchmarkScrape: one scrape (gather and encode) of 500 pods, 2 L3 and 1 PERF_PKG domain
// and pressure each, against reading the same counter and pressure files raw, in the same
// loop. The ratio is what the exporter costs over the files it must read anyway: the
// registry, directory listings, bookkeeping and encoding. Target: at most 2.
func BenchmarkScrape(b *testing.B) {
	const pods = 500
	cfg := manyPods(b, pods)
	inv, err := inventory.Open(cfg, resctrlfs.MountFor(cfg.ResctrlSimulator))
	if err != nil {
		b.Fatal(err)
	}
	c, err := exporter.New(inv, exporter.Options{PSI: &cgroup.Host{}})
	if err != nil {
		b.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	// The files a raw reader reads: every counter of every group, the pressure files of
	// each pod's cgroup and container.
	ps, err := inv.Pods(inventory.Options{})
	if err != nil || len(ps) != pods {
		b.Fatalf("%d pods, %v", len(ps), err)
	}
	root, err := (&cgroup.Host{}).Dir("/")
	if err != nil {
		b.Fatal(err)
	}
	var files []string
	for _, p := range ps {
		for _, d := range []string{"mon_L3_00", "mon_L3_01"} {
			for _, f := range []string{"llc_occupancy", "mbm_total_bytes", "mbm_local_bytes"} {
				files = append(files, filepath.Join(cfg.ResctrlRoot, p.Path, "mon_data", d, f))
			}
		}
		for _, f := range []string{"core_energy", "activity"} {
			files = append(files, filepath.Join(cfg.ResctrlRoot, p.Path, "mon_data", "mon_PERF_PKG_00", f))
		}
		for _, cg := range []string{p.Cgroup, p.Containers[0].Cgroup} {
			if cg == "" {
				continue
			}
			for _, r := range psi.Resources() {
				files = append(files, filepath.Join(root, cg, r.File()))
			}
		}
	}
	series := 0
	var raw, scrape time.Duration
	readRaw := func() {
		start := time.Now()
		for _, f := range files {
			if _, err := os.ReadFile(f); err != nil {
				b.Fatal(err)
			}
		}
		raw += time.Since(start)
	}
	doScrape := func() {
		start := time.Now()
		mfs, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		enc := expfmt.NewEncoder(io.Discard, expfmt.NewFormat(expfmt.TypeTextPlain))
		series = 0
		for _, mf := range mfs {
			series += len(mf.GetMetric())
			if err := enc.Encode(mf); err != nil {
				b.Fatal(err)
			}
		}
		scrape += time.Since(start)
	}
	i := 0
	for b.Loop() {
		// Each goes first in turn: whichever reads a group first after a while pays the
		// simulator's charging of CPU time since.
		if i%2 == 0 {
			readRaw()
			doScrape()
		} else {
			doScrape()
			readRaw()
		}
		i++
	}
	b.ReportMetric(float64(scrape)/float64(raw), "scrape/raw")
	b.ReportMetric(float64(scrape.Milliseconds())/float64(b.N), "scrape-ms")
	b.ReportMetric(float64(len(files)), "raw-files")
	b.ReportMetric(float64(series), "series")
}

// BenchmarkServeMemory: the resident memory of `resctrl-mon serve` with 1000 pods, after a
// few scrapes. Target: at most 50 MiB.
func BenchmarkServeMemory(b *testing.B) {
	const pods = 1000
	cfg := manyPods(b, pods)
	bin := filepath.Join(b.TempDir(), "resctrl-mon")
	if out, err := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", bin, "../../cmd/resctrl-mon").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	cfgPath := filepath.Join(b.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgPath, fmt.Appendf(nil, "resctrlRoot: %s\nresctrlSimulator: true\nstateDir: %s\nsnapshotDir: \"\"\n", cfg.ResctrlRoot, cfg.StateDir), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfgPath, "serve", "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := ""
	sc := bufio.NewScanner(stderr)
	for addr == "" && sc.Scan() {
		if _, a, ok := strings.Cut(sc.Text(), `msg="serving /metrics and /healthz" address=`); ok {
			addr = a
		}
	}
	if addr == "" {
		b.Fatal("serve did not say where it listens")
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	var rss float64
	for b.Loop() {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || n == 0 {
			b.Fatalf("/metrics: %s, %d bytes", resp.Status, n)
		}
		rss = vmRSS(b, cmd.Process.Pid)
	}
	b.ReportMetric(rss/(1<<20), "rss-MiB")
	b.ReportMetric(rss/(50<<20), "rss/50MiB")
}

func vmRSS(b *testing.B, pid int) float64 {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for l := range strings.Lines(string(st)) {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb * 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
