package bench_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/bench"
	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// BenchmarkAdapterVsPeer runs our NRI adapter and its peer, containers/nri-plugins'
// resctrl-mon (test/runtimes/nri-resctrl-mon.sh builds it), each on its own containerd 2.4.2
// beside a third containerd without a plugin, alternated pod by pod in a rotating order.
// A pod is kubelet-like (crictl runp) with two forking containers; its start (runp, create
// and start of both) is timed, its end (waiting for both forkers, stopping and removing the
// pod) is not. It prints each plugin's CPU per pod lifecycle (utime+stime from
// /proc/<pid>/stat over all its pods, background work included, divided by the pods) and
// their ratio ours/peer, and each configuration's pod start median and p90 with its ratio
// over no plugin. The peer has a simulator mount of its own: it removes any UUID-named group
// it does not track, which would be ours. RESCTRLMON_BENCH_NRI_ARGS and RESCTRLMON_BENCH_NRI_ENV
// add flags and environment variables to ours.
func BenchmarkAdapterVsPeer(b *testing.B) {
	peerBin := filepath.Join(e2e.RuntimeBins(b, "nri-resctrl-mon"), "nri-resctrl-mon")
	simOpts := resctrlsim.Options{NumRMIDs: 256, SettleInterval: -1}
	e := e2e.NewHookEnv(b, simOpts, "")
	tmp := e2e.Tmpfs(b) // state, snapshots and log on a tmpfs, as in production (/run)
	e.StateDir, e.SnapDir, e.LogPath = tmp+"/state", tmp+"/snap", tmp+"/nri.log"
	e.Config("")
	peerSim := resctrlsim.MountT(b, simOpts)

	none := e2e.StartContainerd(b, e2e.ContainerdOptions{Rootfs: e.Rootfs})
	peer := e2e.StartContainerd(b, e2e.ContainerdOptions{Rootfs: e.Rootfs})
	ours := e2e.StartContainerd(b, e2e.ContainerdOptions{Rootfs: e.Rootfs})
	peerPid := startPeer(b, peerBin, peerSim.Dir, peer.NRISocket)
	oursCmd := exec.Command(e2e.Binaries.NRI, "--config", e.CfgPath, "--nri-socket", ours.NRISocket)
	// Variants of ours for a comparison in one run (docs/benchmarks.md): more flags, such as
	// --snapshotDir= (no snapshots), and environment, such as GOMAXPROCS=2.
	oursCmd.Args = append(oursCmd.Args, strings.Fields(os.Getenv("RESCTRLMON_BENCH_NRI_ARGS"))...)
	oursCmd.Env = append(os.Environ(), strings.Fields(os.Getenv("RESCTRLMON_BENCH_NRI_ENV"))...)
	e2e.StartAdapterCmd(b, e, oursCmd)
	oursPid := oursCmd.Process.Pid

	n := 0
	// lifecycle runs one pod on c and returns its start time; root is where its plugin
	// puts the pod's group ("" for none), which must hold tasks of both containers.
	lifecycle := func(c *e2e.Containerd, root string) time.Duration {
		n++
		uid := fmt.Sprintf("%08x-0000-4000-8000-000000000000", n)
		t0 := time.Now()
		pod, err := c.RunPod(e2e.PodSpec{Name: fmt.Sprintf("p%d", n), Namespace: "bench", UID: uid, Kubelet: true})
		if err != nil {
			b.Fatal(err)
		}
		names := []string{"app", "sidecar"}
		for _, name := range names {
			if _, err := c.RunContainer(pod, e2e.TestImage, e2e.ContainerSpec{Name: name, Command: []string{"forker"}}); err != nil {
				b.Fatalf("%v\n%s", err, e.Log())
			}
		}
		d := time.Since(t0)
		b.StopTimer()
		for _, name := range names {
			if err := c.WaitLog(pod, name, "ready", 20*time.Second); err != nil {
				b.Fatal(err)
			}
		}
		if root != "" {
			tasks, err := os.ReadFile(filepath.Join(root, "mon_groups", uid, "tasks"))
			if err != nil || len(strings.Fields(string(tasks))) < 2 {
				b.Fatalf("pod %s: its group under %s holds %q (%v)\n%s", uid, root, tasks, err, e.Log())
			}
		}
		if err := c.StopPod(pod.ID); err != nil {
			b.Fatal(err)
		}
		if err := c.RemovePod(pod.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		return d
	}
	type config struct {
		name string
		c    *e2e.Containerd
		root string
		pid  int
	}
	configs := []config{{"none", none, "", 0}, {"peer", peer, peerSim.Dir, peerPid}, {"ours", ours, e.Sim.Dir, oursPid}}
	for _, c := range configs { // the first pod of each is slower (image unpacked, caches)
		lifecycle(c.c, c.root)
	}
	times := make([][]time.Duration, len(configs))
	cpu0 := make([]time.Duration, len(configs))
	for k, c := range configs {
		cpu0[k] = procCPU(b, c.pid)
	}
	i := 0
	for b.Loop() {
		for k := range configs {
			j := (i + k) % len(configs)
			times[j] = append(times[j], lifecycle(configs[j].c, configs[j].root))
		}
		i++
	}
	if i == 0 {
		return
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	cpu := make([]time.Duration, len(configs))
	for k, c := range configs {
		cpu[k] = (procCPU(b, c.pid) - cpu0[k]) / time.Duration(i)
		med, p90 := bench.Median(times[k]), quantile(times[k], 0.9)
		b.ReportMetric(ms(med), c.name+"-start-ms-median")
		b.ReportMetric(ms(p90), c.name+"-start-ms-p90")
		if k > 0 {
			b.ReportMetric(ms(cpu[k]), c.name+"-cpu-ms/pod")
			b.ReportMetric(float64(med)/float64(bench.Median(times[0])), c.name+"-start-x-none")
			b.ReportMetric(float64(p90)/float64(quantile(times[0], 0.9)), c.name+"-start-p90-x-none")
		}
	}
	if cpu[1] > 0 {
		b.ReportMetric(float64(cpu[2])/float64(cpu[1]), "cpu-ours/peer")
	}
	b.ReportMetric(float64(bench.Median(times[2]))/float64(bench.Median(times[1])), "start-ours/peer")
}

// startPeer runs the peer plugin against a containerd's NRI socket with its resctrl root at
// root and waits until it has synchronised; it returns its pid. It has no network listener.
func startPeer(b *testing.B, bin, root, socket string) int {
	b.Helper()
	cfg := filepath.Join(b.TempDir(), "peer.yaml")
	if err := os.WriteFile(cfg, []byte("resctrlPath: "+root+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "-name", "resctrl-mon", "-idx", "10", "-config", cfg)
	// It has no flag for the socket, and its NRI_PLUGIN_SOCKET is the number of a descriptor
	// already connected (as the runtime passes to plugins it launches itself): connect for it.
	conn, err := net.Dial("unix", socket)
	if err != nil {
		b.Fatal(err)
	}
	f, err := conn.(*net.UnixConn).File()
	_ = conn.Close()
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	cmd.ExtraFiles = []*os.File{f}
	cmd.Env = append(os.Environ(), "NRI_PLUGIN_SOCKET=3")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StderrPipe() // logrus writes to stderr
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	synced := make(chan bool, 1)
	var said strings.Builder // read only once synced is closed: all written by then
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() { // read to the end: a full pipe would block the peer
			if said.Len() < 1<<14 {
				said.WriteString(sc.Text() + "\n")
			}
			if strings.Contains(sc.Text(), "synchronization complete") {
				select {
				case synced <- true:
				default:
				}
			}
		}
		close(synced)
	}()
	select {
	case ok := <-synced:
		if !ok {
			b.Fatalf("the peer exited before synchronising:\n%s", said.String())
		}
	case <-time.After(20 * time.Second):
		b.Fatalf("the peer did not synchronise")
	}
	return cmd.Process.Pid
}

// procCPU is the user and system CPU time of a process so far (0 for pid 0), from
// /proc/<pid>/stat's utime and stime in clock ticks (USER_HZ, 100 on Linux).
func procCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	if pid == 0 {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name (field 2) may hold spaces: count fields after its ')'.
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		b.Fatalf("/proc/%d/stat: %q has too few fields", pid, s)
	}
	var ticks int64
	for _, v := range f[11:13] { // utime, stime: fields 14 and 15
		t, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			b.Fatalf("/proc/%d/stat: %v", pid, err)
		}
		ticks += t
	}
	return time.Duration(ticks) * (time.Second / 100)
}

// quantile is the q-quantile of ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	k := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(k, len(s)-1))]
}
