package psimetrics

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/psi"
)

// Pressure files as this machine's kernel writes them, and as kernels before 5.13 wrote a
// cgroup's cpu.pressure (no full line).
const (
	cpu5   = "some avg10=1.50 avg60=0.75 avg300=0.20 total=2500000\nfull avg10=0.50 avg60=0.25 avg300=0.00 total=1000000\n"
	cpuOld = "some avg10=0.00 avg60=0.00 avg300=0.00 total=385\n"
	mem    = "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	io     = "some avg10=0.89 avg60=1.19 avg300=1.33 total=15961145\nfull avg10=0.00 avg60=0.00 avg300=0.15 total=7168173\n"
)

func cgroupDir(t *testing.T, files map[psi.Resource]string) string {
	t.Helper()
	dir := t.TempDir()
	for r, content := range files {
		if err := os.WriteFile(filepath.Join(dir, r.File()), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func fixed(ts ...Target) func() []Target { return func() []Target { return ts } }

// errorsText is the read-error counter: every series at 0 but those in nonzero.
func errorsText(nonzero map[string]int) string {
	var b strings.Builder
	b.WriteString("# HELP resctrl_mon_pressure_read_errors_total Pressure files that could not be read, by resource and reason; their series were left out of that scrape.\n")
	b.WriteString("# TYPE resctrl_mon_pressure_read_errors_total counter\n")
	for _, r := range []string{"cpu", "io", "memory"} {
		for _, reason := range []string{"bad_target", "format", "gone", "io", "missing", "permission", "unsupported"} {
			n := nonzero[r+"/"+reason]
			b.WriteString("resctrl_mon_pressure_read_errors_total{reason=\"" + reason + "\",resource=\"" + r + "\"} " + strconv.Itoa(n) + "\n")
		}
	}
	return b.String()
}

func TestCollect(t *testing.T) {
	t.Parallel()
	full := cgroupDir(t, map[psi.Resource]string{psi.CPU: cpu5, psi.Memory: mem, psi.IO: io})
	old := cgroupDir(t, map[psi.Resource]string{psi.CPU: cpuOld, psi.Memory: mem, psi.IO: io})
	c, err := New(Options{Labels: []string{"pod", "container"}}, fixed(
		Target{Dir: full, Labels: []string{"p1", "a"}},
		Target{Dir: old, Labels: []string{"p1", "b"}},
	))
	if err != nil {
		t.Fatal(err)
	}
	want := `
# HELP resctrl_mon_pressure_cpu_stalled_seconds_total Total time in seconds all non-idle tasks of the cgroup were stalled on cpu at once (PSI full).
# TYPE resctrl_mon_pressure_cpu_stalled_seconds_total counter
resctrl_mon_pressure_cpu_stalled_seconds_total{container="a",pod="p1"} 1
# HELP resctrl_mon_pressure_cpu_waiting_seconds_total Total time in seconds at least one task of the cgroup waited for cpu (PSI some).
# TYPE resctrl_mon_pressure_cpu_waiting_seconds_total counter
resctrl_mon_pressure_cpu_waiting_seconds_total{container="a",pod="p1"} 2.5
resctrl_mon_pressure_cpu_waiting_seconds_total{container="b",pod="p1"} 0.000385
# HELP resctrl_mon_pressure_io_stalled_seconds_total Total time in seconds all non-idle tasks of the cgroup were stalled on io at once (PSI full).
# TYPE resctrl_mon_pressure_io_stalled_seconds_total counter
resctrl_mon_pressure_io_stalled_seconds_total{container="a",pod="p1"} 7.168173
resctrl_mon_pressure_io_stalled_seconds_total{container="b",pod="p1"} 7.168173
# HELP resctrl_mon_pressure_io_waiting_seconds_total Total time in seconds at least one task of the cgroup waited for io (PSI some).
# TYPE resctrl_mon_pressure_io_waiting_seconds_total counter
resctrl_mon_pressure_io_waiting_seconds_total{container="a",pod="p1"} 15.961145
resctrl_mon_pressure_io_waiting_seconds_total{container="b",pod="p1"} 15.961145
# HELP resctrl_mon_pressure_memory_stalled_seconds_total Total time in seconds all non-idle tasks of the cgroup were stalled on memory at once (PSI full).
# TYPE resctrl_mon_pressure_memory_stalled_seconds_total counter
resctrl_mon_pressure_memory_stalled_seconds_total{container="a",pod="p1"} 0
resctrl_mon_pressure_memory_stalled_seconds_total{container="b",pod="p1"} 0
# HELP resctrl_mon_pressure_memory_waiting_seconds_total Total time in seconds at least one task of the cgroup waited for memory (PSI some).
# TYPE resctrl_mon_pressure_memory_waiting_seconds_total counter
resctrl_mon_pressure_memory_waiting_seconds_total{container="a",pod="p1"} 0
resctrl_mon_pressure_memory_waiting_seconds_total{container="b",pod="p1"} 0
` + errorsText(nil)
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// A file that vanishes or is garbage leaves its series out and counts an error; the other
// files and targets are still exported, and the scrape does not fail.
func TestCollectReadErrors(t *testing.T) {
	t.Parallel()
	gone := cgroupDir(t, nil)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	partial := cgroupDir(t, map[psi.Resource]string{psi.CPU: "garbage\n", psi.IO: io}) // no memory.pressure
	c, err := New(Options{Labels: []string{"container"}}, fixed(
		Target{Dir: gone, Labels: []string{"gone"}},
		Target{Dir: partial, Labels: []string{"partial"}},
	))
	if err != nil {
		t.Fatal(err)
	}
	want := `
# HELP resctrl_mon_pressure_io_stalled_seconds_total Total time in seconds all non-idle tasks of the cgroup were stalled on io at once (PSI full).
# TYPE resctrl_mon_pressure_io_stalled_seconds_total counter
resctrl_mon_pressure_io_stalled_seconds_total{container="partial"} 7.168173
# HELP resctrl_mon_pressure_io_waiting_seconds_total Total time in seconds at least one task of the cgroup waited for io (PSI some).
# TYPE resctrl_mon_pressure_io_waiting_seconds_total counter
resctrl_mon_pressure_io_waiting_seconds_total{container="partial"} 15.961145
` + errorsText(map[string]int{"cpu/gone": 1, "memory/gone": 1, "io/gone": 1, "cpu/format": 1, "memory/missing": 1})
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	// Through a registry and its HTTP exposition path, the scrape succeeds.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	if _, err := reg.Gather(); err != nil {
		t.Errorf("gather: %v", err)
	}
}

func TestCollectAverages(t *testing.T) {
	t.Parallel()
	dir := cgroupDir(t, map[psi.Resource]string{psi.CPU: cpu5})
	c, err := New(Options{Labels: []string{"container"}, Averages: true}, fixed(Target{Dir: dir, Labels: []string{"a"}}))
	if err != nil {
		t.Fatal(err)
	}
	want := `
# HELP resctrl_mon_pressure_cpu_stalled_ratio The kernel's running average over the window of the share of time counted by resctrl_mon_pressure_cpu_stalled_seconds_total (0..1).
# TYPE resctrl_mon_pressure_cpu_stalled_ratio gauge
resctrl_mon_pressure_cpu_stalled_ratio{container="a",window="10s"} 0.005
resctrl_mon_pressure_cpu_stalled_ratio{container="a",window="300s"} 0
resctrl_mon_pressure_cpu_stalled_ratio{container="a",window="60s"} 0.0025
# HELP resctrl_mon_pressure_cpu_waiting_ratio The kernel's running average over the window of the share of time counted by resctrl_mon_pressure_cpu_waiting_seconds_total (0..1).
# TYPE resctrl_mon_pressure_cpu_waiting_ratio gauge
resctrl_mon_pressure_cpu_waiting_ratio{container="a",window="10s"} 0.015
resctrl_mon_pressure_cpu_waiting_ratio{container="a",window="300s"} 0.002
resctrl_mon_pressure_cpu_waiting_ratio{container="a",window="60s"} 0.0075
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "resctrl_mon_pressure_cpu_stalled_ratio", "resctrl_mon_pressure_cpu_waiting_ratio"); err != nil {
		t.Error(err)
	}
}

func TestCollectBadTargets(t *testing.T) {
	t.Parallel()
	dir := cgroupDir(t, map[psi.Resource]string{psi.CPU: cpuOld, psi.Memory: mem, psi.IO: io})
	c, err := New(Options{Labels: []string{"container"}}, fixed(
		Target{Dir: dir, Labels: []string{"a"}},
		Target{Dir: dir, Labels: []string{"a"}},          // the same series again
		Target{Dir: dir, Labels: []string{"b", "extra"}}, // too many labels
		Target{Dir: dir, Labels: []string{"\xff\xfe"}},   // not UTF-8
	))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	if n, err := testutil.GatherAndCount(reg, "resctrl_mon_pressure_cpu_waiting_seconds_total"); err != nil || n != 1 {
		t.Errorf("cpu waiting series: %d, %v; want 1", n, err)
	}
	want := errorsText(map[string]int{"cpu/bad_target": 6, "memory/bad_target": 6, "io/bad_target": 6}) // two gathers
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "resctrl_mon_pressure_read_errors_total"); err != nil {
		t.Error(err)
	}
}

func TestNewRefusesLabels(t *testing.T) {
	t.Parallel()
	for _, labels := range [][]string{{"window"}, {"__name"}, {"1a"}, {""}, {"a-b"}, {"pod", "pod"}} {
		if _, err := New(Options{Labels: labels}, fixed()); err == nil {
			t.Errorf("labels %q accepted", labels)
		}
	}
	if _, err := New(Options{Labels: []string{"pod", "container", "_x", "a1"}}, fixed()); err != nil {
		t.Error(err)
	}
}

// This test process's own cgroup, read for real.
func TestCollectSelf(t *testing.T) {
	t.Parallel()
	dir, err := cgroup.Host{}.ProcessDir(os.Getpid())
	if errors.Is(err, cgroup.ErrNoUnified) || errors.Is(err, cgroup.ErrNotMounted) {
		// Only a host without cgroup v2 may skip it, and not under RESCTRLSIM_REQUIRE=1 (make
		// test's default): any other error is ProcessDir's own, and fails.
		if os.Getenv("RESCTRLSIM_REQUIRE") == "1" {
			t.Fatalf("no cgroup v2 directory: %v (RESCTRLSIM_REQUIRE=1 forbids skipping)", err)
		}
		t.Skipf("no cgroup v2 directory: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Labels: []string{"container"}}, fixed(Target{Dir: dir, Labels: []string{"self"}}))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	for _, r := range psi.Resources() {
		n, err := testutil.GatherAndCount(reg, Prefix+string(r)+"_waiting_seconds_total")
		if err != nil || n != 1 {
			t.Errorf("%s: %d series, %v", r, n, err)
		}
	}
}
