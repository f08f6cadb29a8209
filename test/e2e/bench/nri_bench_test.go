package bench_test

import (
	"bufio"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/bench"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// BenchmarkPodStartNRI times a CRI pod start through crictl (runp, then create and start of
// one container) on a containerd 2.4.2 whose NRI runs the adapter, against the same on a
// containerd without a plugin, and on one with a no-op NRI plugin subscribed to the same
// events (the floor any external plugin costs: its round trips), in turn in one loop, in a
// rotating order. Each pod is stopped and removed untimed. It prints medians and the ratio
// of medians. Target: ≤ 1.02× against containerd without a plugin.
//
// To tell the adapter's own work from NRI's round trips it also prints the adapter's median
// StartContainer handling, from its log (the only event of a pod start it does work for:
// RunPodSandbox is not subscribed, PostStartContainer finds the container placed).
func BenchmarkPodStartNRI(b *testing.B) {
	e := e2e.NewHookEnv(b, resctrlsim.Options{NumRMIDs: 256, SettleInterval: -1}, "")
	// State, snapshots and the log on a tmpfs, as in production (/run): on a journaling
	// disk a rename over a record starts its writeback, which would be timed too.
	tmp := e2e.Tmpfs(b)
	e.StateDir, e.SnapDir, e.LogPath = tmp+"/state", tmp+"/snap", tmp+"/nri.log"
	e.Config("")
	adapter := e2e.StartContainerd(b, e2e.ContainerdOptions{Rootfs: e.Rootfs})
	plain := e2e.StartContainerd(b, e2e.ContainerdOptions{Rootfs: e.Rootfs})
	noop := e2e.StartContainerd(b, e2e.ContainerdOptions{Rootfs: e.Rootfs})
	e2e.StartAdapter(b, e, adapter.NRISocket)
	startNoopNRI(b, noop.NRISocket)

	n := 0
	start := func(c *e2e.Containerd) time.Duration {
		n++
		t0 := time.Now()
		pod, err := c.RunPod(e2e.PodSpec{Name: fmt.Sprintf("p%d", n), Namespace: "bench",
			UID: fmt.Sprintf("%08x-0000-4000-8000-000000000000", n), Kubelet: true})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.RunContainer(pod, e2e.TestImage, e2e.ContainerSpec{Name: "app", Command: []string{"sleep", "600"}}); err != nil {
			b.Fatalf("%v\n%s", err, e.Log())
		}
		d := time.Since(t0)
		b.StopTimer()
		if err := c.StopPod(pod.ID); err != nil {
			b.Fatal(err)
		}
		if err := c.RemovePod(pod.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		return d
	}
	daemons := []*e2e.Containerd{plain, adapter, noop}
	for _, c := range daemons { // the first pod of each is slower (image unpacked, caches)
		start(c)
	}
	// Every pod is new: each of its containers makes the pod's group.
	placed := func() int { return e.LogLines("event=StartContainer", "msg=placed", "outcome=created") }
	before := placed()
	times := make([][]time.Duration, len(daemons))
	i := 0
	for b.Loop() {
		// Whatever one start leaves behind (a shim exiting, cgroups being torn down)
		// falls on each alike.
		for k := range daemons {
			j := (i + k) % len(daemons)
			times[j] = append(times[j], start(daemons[j]))
		}
		i++
	}
	if i == 0 {
		return
	}
	if got := placed() - before; got != i {
		b.Errorf("the adapter placed %d of %d containers:\n%s", got, i, e.Log())
	}
	p, a, o := bench.Median(times[0]), bench.Median(times[1]), bench.Median(times[2])
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(p), "plain-ms/start")
	b.ReportMetric(ms(a), "adapter-ms/start")
	b.ReportMetric(ms(o), "noopnri-ms/start")
	b.ReportMetric(float64(a)/float64(p), "x-plain")
	b.ReportMetric(float64(o)/float64(p), "noopnri-x-plain")
	b.ReportMetric(float64(a)/float64(o), "x-noopnri")
	if h := adapterDurations(e.Log(), "StartContainer"); len(h) > 0 {
		b.ReportMetric(float64(bench.Median(h).Microseconds()), "adapter-StartContainer-µs")
	}
}

// startNoopNRI runs the no-op NRI plugin against a runtime's NRI socket and waits until the
// runtime has synchronised it.
func startNoopNRI(b *testing.B, socket string) {
	b.Helper()
	cmd := exec.Command(e2e.Binaries.NoopNRI, "--nri-socket", socket)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	synced := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "synchronized" {
				synced <- true
			}
		}
		close(synced)
	}()
	select {
	case ok := <-synced:
		if !ok {
			b.Fatalf("the no-op NRI plugin exited: %s", stderr.String())
		}
	case <-time.After(20 * time.Second):
		b.Fatalf("the no-op NRI plugin did not synchronise: %s", stderr.String())
	}
}

// adapterDurations are the durations the adapter logged for an event.
func adapterDurations(log, event string) []time.Duration {
	re := regexp.MustCompile(`\bduration=(\S+)`)
	var out []time.Duration
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, "event="+event+" ") {
			continue
		}
		if m := re.FindStringSubmatch(l); m != nil {
			if d, err := time.ParseDuration(m[1]); err == nil {
				out = append(out, d)
			}
		}
	}
	return out
}
