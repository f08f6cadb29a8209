package k8s

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/registrytest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// The adapter's own port on the node's loopback in this test (exporter.host is 127.0.0.1
// here), one nothing else on these machines uses.
const adapterHealthPort = 19533

// adapterProbeValues are the chart's nri.health for this test: probes that notice a stopped
// adapter within seconds, yet slow enough that a pod started just after the stop runs its
// containers before kubelet restarts the adapter (about periodSeconds × failureThreshold,
// then terminationGracePeriodSeconds, later).
const adapterProbeValues = `nri:
  health:
    port: %d
    livenessProbe: {periodSeconds: 3, timeoutSeconds: 1, failureThreshold: 4}
    readinessProbe: {periodSeconds: 2, timeoutSeconds: 1, failureThreshold: 1}
terminationGracePeriodSeconds: 3
`

// A stopped adapter (SIGSTOP: the process is there, its socket accepts connections, nothing
// answers) is restarted by its liveness probe, and nothing is lost: a pod started while it
// was stopped ends up in a group of its own with every task, and once the pod is gone its
// group and RMID are gone too. containerd with NRI, the chart in mode nri.
func TestKubernetesAdapterStoppedIsRestarted(t *testing.T) {
	buildImages(t)
	reg := registrytest.Start(t)
	publish(t, reg.Addr, images.test1, "test1")
	sim := resctrlsim.MountT(t, resctrlsim.Options{NumRMIDs: 64})
	c := StartCluster(t, "containerd", ClusterOptions{Forker: images.forker, Registry: reg.Addr})
	s := &scenario{Cluster: c, mode: "nri", sim: sim, state: filepath.Join(c.Work, "state"), registry: reg.Addr}
	host := filepath.Join(c.Work, "host")
	s.hookPath = filepath.Join(host, "libexec", "resctrl-mon-hook")
	s.hooksDir = filepath.Join(c.Work, "o", "hooks.d")
	s.hookConfig = c.WrapperConfig()

	extra := filepath.Join(c.Work, "values-probes.yaml")
	if err := os.WriteFile(extra, fmt.Appendf(nil, adapterProbeValues, adapterHealthPort), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Helm("install", release, chartRef(s.registry), "--version", chartVersion("test1"), "--plain-http",
		"--namespace", namespace, "--create-namespace", "-f", s.writeValues("test1"), "-f", extra, "--wait", "--timeout", "120s")
	daemon := s.daemonPod()
	ready := s.adapterReady(daemon.Name, -1)
	s.requireReadyz()

	// A pod started while the adapter runs: how long a start takes here, and a group that
	// must come through the adapter's restart untouched.
	before, beforeIn := s.startPod("before")
	s.waitForker(before, "main")
	s.requirePlaced("pod started before the stop", before, before.UID)

	socket := filepath.Join(s.Work, "c", "nri", "nri.sock")
	pid := adapterPid(t, socket)
	groupsBefore := s.groupRMIDs()
	t.Logf("adapter pid %d, restartCount %d, Ready; groups before: %v", pid, ready.restarts, groupsBefore)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP %d: %v", pid, err)
	}
	// Whatever happens next, a stopped process is not left to the cluster's teardown.
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	stopped := time.Now()
	s.Eventually(10*time.Second, "the adapter stopped", func() (bool, string) {
		st, err := procState(pid)
		return st == "T", fmt.Sprintf("state %q %v", st, err)
	})

	// A pod started while the adapter is stopped: the runtime's NRI requests to it go
	// unanswered until NRI's own timeout.
	p, startedIn := s.startPod("meanwhile")
	now := s.adapterStatus(daemon.Name)
	t.Logf("pod meanwhile running %s after it was applied, the adapter stopped (its restartCount then %d); pod before, the adapter running: %s",
		startedIn.Round(100*time.Millisecond), now.restarts, beforeIn.Round(100*time.Millisecond))
	s.logNRI()
	if now.restarts != ready.restarts {
		// Not a failure of what is tested (nothing may be lost either way), but then the pod
		// did not start while the adapter was stopped, and the test proves less: say so.
		t.Logf("the adapter was restarted before pod meanwhile ran: its start did not meet the stopped adapter")
	}

	// kubelet's liveness probe finds the stopped adapter and restarts its container; the new
	// one registers, synchronises and is Ready.
	after := s.adapterReady(daemon.Name, ready.restarts)
	t.Logf("the adapter restarted by its liveness probe (restartCount %d -> %d) and Ready %s after the SIGSTOP",
		ready.restarts, after.restarts, time.Since(stopped).Round(100*time.Millisecond))
	if newPid := adapterPid(t, socket); newPid == pid {
		t.Errorf("the adapter's pid is still %d after its restart", pid)
	}
	s.requireReadyz()

	// Nothing lost: the pod started meanwhile is in a group of its own, every task in it;
	// the pod started before keeps its group, RMID and tasks.
	s.waitForker(p, "main")
	s.requirePlaced("pod started while the adapter was stopped", p, p.UID)
	s.requirePlaced("pod started before, after the adapter's restart", before, before.UID)
	groups := s.groupRMIDs()
	mine, ok := groups[groupOf(p.UID)]
	if !ok {
		t.Fatalf("pod meanwhile has no group %s: %v", groupOf(p.UID), groups)
	}
	for path, rmid := range groupsBefore {
		if groups[path] != rmid {
			t.Errorf("%s held RMID %d before the stop, %d after", path, rmid, groups[path])
		}
		if rmid == mine {
			t.Errorf("pod meanwhile shares RMID %d with %s", mine, path)
		}
	}
	if len(groups) != len(groupsBefore)+1 {
		t.Errorf("groups after: %v, want those before (%v) and pod meanwhile's only", groups, groupsBefore)
	}

	// No RMID leaked: once the pod is gone (retention 5 s), the groups are those before.
	s.Kubectl("-n", "default", "delete", "pod", "meanwhile", "--wait=true", "--timeout=60s")
	s.Eventually(60*time.Second, "the groups as before pod meanwhile", func() (bool, string) {
		g := s.groupRMIDs()
		return fmt.Sprint(g) == fmt.Sprint(groupsBefore), fmt.Sprintf("groups %v, want %v", g, groupsBefore)
	})
}

// adapterState is what the API says of the nri-adapter container.
type adapterState struct {
	restarts int
	ready    bool
}

func (s *scenario) adapterStatus(pod string) adapterState {
	s.t.Helper()
	out, err := s.TryKubectl("-n", namespace, "get", "pod", pod, "-o",
		`jsonpath={.status.containerStatuses[?(@.name=="nri-adapter")].restartCount} {.status.containerStatuses[?(@.name=="nri-adapter")].ready}`)
	if err != nil {
		return adapterState{restarts: -1}
	}
	f := strings.Fields(out)
	if len(f) != 2 {
		return adapterState{restarts: -1}
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return adapterState{restarts: -1}
	}
	return adapterState{restarts: n, ready: f[1] == "true"}
}

// adapterReady waits for the pod's nri-adapter to be Ready with a restartCount above
// restartsAbove (-1: any).
func (s *scenario) adapterReady(pod string, restartsAbove int) adapterState {
	s.t.Helper()
	var st adapterState
	s.Eventually(120*time.Second, fmt.Sprintf("nri-adapter Ready, restartCount above %d", restartsAbove), func() (bool, string) {
		st = s.adapterStatus(pod)
		return st.ready && st.restarts > restartsAbove, fmt.Sprintf("%+v", st)
	})
	return st
}

// requireReadyz asks the adapter's own port, as kubelet does.
func (s *scenario) requireReadyz() {
	s.t.Helper()
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", adapterHealthPort)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(url)
	if err != nil {
		s.t.Fatalf("%s: %v", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		s.t.Errorf("%s: %s", url, resp.Status)
	}
}

// groupRMIDs maps each monitoring group of the simulator to its RMID.
func (s *scenario) groupRMIDs() map[string]int {
	g := map[string]int{}
	for _, st := range s.sim.Status().Groups {
		if strings.HasPrefix(st.Path, "mon_groups/") {
			g[st.Path] = st.RMID
		}
	}
	return g
}

// adapterPid is the one resctrl-mon-nri process of this cluster (its --nri-socket): a real
// process on the host (the pod shares the host's PID namespace, and every container's
// processes are the host's). Other tests' adapters run beside it with other sockets.
func adapterPid(t *testing.T, socket string) int {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
		if filepath.Base(args[0]) == "resctrl-mon-nri" && slices.Contains(args, "--nri-socket="+socket) {
			if st, _ := procState(pid); st != "Z" {
				pids = append(pids, pid)
			}
		}
	}
	if len(pids) != 1 {
		t.Fatalf("resctrl-mon-nri processes on %s: %v, want one", socket, pids)
	}
	return pids[0]
}

// procState is the state letter of /proc/<pid>/stat (T: stopped, Z: zombie).
func procState(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", err
	}
	// The command is in parentheses and may hold spaces: the state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) == 0 {
		return "", fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	return f[0], nil
}

// startPod starts a pod of one forking container in default and waits for it to run: the
// pod, and how long from the apply until its container ran.
func (s *scenario) startPod(name string) (Pod, time.Duration) {
	start := time.Now()
	s.Apply(`apiVersion: v1
kind: Pod
metadata: {name: ` + name + `, namespace: default}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:` + fmt.Sprintf(forkerContainer, "main") + "\n")
	var p Pod
	s.Eventually(120*time.Second, "pod "+name+" running", func() (bool, string) {
		var err error
		p, err = s.GetPod("default", name)
		if err != nil {
			return false, err.Error()
		}
		return len(p.Containers) == 1 && p.Containers[0].Running, "not running"
	})
	return p, time.Since(start)
}

// nriLine is what containerd logs of its NRI plugins.
var nriLine = regexp.MustCompile(`(?i)nri|plugin "?10-resctrl-mon`)

// logNRI shows what containerd logged of NRI: how it treated the stopped plugin.
func (s *scenario) logNRI() {
	b, err := os.ReadFile(filepath.Join(s.Work, "c", "containerd.log"))
	if err != nil {
		s.t.Logf("containerd's log: %v", err)
		return
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if nriLine.MatchString(l) && strings.Contains(strings.ToLower(l), "resctrl-mon") {
			lines = append(lines, l)
		}
	}
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	s.t.Logf("containerd's log of the NRI plugin (last %d lines):\n%s", len(lines), strings.Join(lines, "\n"))
}
