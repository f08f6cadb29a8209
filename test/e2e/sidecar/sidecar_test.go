package sidecar_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

// sidecar is `resctrl-mon sidecar` running on the host, serving on loopback.
type sidecar struct {
	url    string
	cmd    *exec.Cmd
	exited chan struct{} // closed when it has exited; err is then its exit error
	err    error
	mu     sync.Mutex
	log    strings.Builder
}

// startSidecar starts the sidecar with PORT=0 and waits for the address it logs.
func startSidecar(t *testing.T, args ...string) *sidecar {
	t.Helper()
	e2e.BuildBinaries(t)
	s := &sidecar{exited: make(chan struct{})}
	s.cmd = exec.Command(e2e.Binaries.CLI, append([]string{"sidecar", "--address", "127.0.0.1", "--max-backoff", "500ms"}, args...)...)
	s.cmd.Env = append(os.Environ(), "PORT=0")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stderr = w
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.log.WriteString(line + "\n")
			s.mu.Unlock()
			if _, rest, ok := strings.Cut(line, " address="); ok && strings.Contains(line, " msg=listening ") {
				addr <- strings.Fields(rest)[0]
			}
		}
		r.Close()
	}()
	go func() {
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
	select {
	case a := <-addr:
		s.url = "http://" + a
	case <-s.exited:
		t.Fatalf("sidecar exited at start: %v\n%s", s.err, s.logs())
	case <-time.After(30 * time.Second):
		t.Fatalf("sidecar did not say where it listens:\n%s", s.logs())
	}
	return s
}

func (s *sidecar) logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// get fetches a path; a transport error is a test failure (the sidecar must keep serving).
func (s *sidecar) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(s.url + path)
	if err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, s.logs())
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// waitHealth polls /healthz until it answers code.
func (s *sidecar) waitHealth(t *testing.T, code int, timeout time.Duration) string {
	t.Helper()
	var body string
	err := poll.Until(timeout, func() error {
		var got int
		got, body = s.get(t, "/healthz")
		if got != code {
			return fmt.Errorf("/healthz: %d %q", got, body)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, s.logs())
	}
	return body
}

// stop sends SIGTERM and checks the sidecar exits cleanly, and never panicked.
func (s *sidecar) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		t.Fatalf("sidecar still running 15s after SIGTERM:\n%s", s.logs())
	}
	if s.err != nil {
		t.Errorf("sidecar exit after SIGTERM: %v\n%s", s.err, s.logs())
	}
	if l := s.logs(); strings.Contains(l, "panic") || strings.Contains(l, "goroutine ") {
		t.Errorf("sidecar panicked:\n%s", l)
	}
}

// burner is a container command: more busy loops than CPUs, so its tasks wait for CPU and
// its cgroup's cpu pressure rises.
func burner() []string {
	n := 2*runtime.NumCPU() + 1
	return []string{"sh", "-c", fmt.Sprintf("i=0; while [ $i -lt %d ]; do (while :; do :; done) & i=$((i+1)); done; wait", n)}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSidecarPSI replays cgroup_monitor_sc's deployment with podman: a pod sharing its
// process namespace, the sidecar on the host finding the container by cgroup_monitor_sc's
// flag files. The container starts after the sidecar (not ready, then ready), its cpu
// pressure rises while it burns CPU, cgroup_monitor_sc's metric names are there with
// --compat-seed-metrics, and when the container goes the sidecar is not ready again and
// keeps serving until SIGTERM.
func TestSidecarPSI(t *testing.T) {
	t.Parallel()
	pm := e2e.Podman(t)
	rootfs := e2e.Rootfs(t, nil)
	flag := e2e.RandomName("e2e-psi-")
	// The container's flag as cgroup_monitor_sc's ConfigMap volume gives it (a directory holding
	// pid_flag), mounted under /run: a tmpfs of podman's, so the shared rootfs is not
	// written to make the mount point. The sidecar's copy is a file on the host.
	flagDir := filepath.Join(t.TempDir(), "pid_flag")
	writeTestFile(t, filepath.Join(flagDir, "pid_flag"), flag+"\n")
	ownFlag := filepath.Join(t.TempDir(), "pid_flag")
	writeTestFile(t, ownFlag, flag+"\n")
	pod := sharedPod(t, pm)

	sc := startSidecar(t, "--flag-path", "/run/pid_flag/pid_flag", "--flag-file", ownFlag, "--compat-seed-metrics")
	const cpuWaiting = "resctrl_mon_pressure_cpu_waiting_seconds_total"
	label := `{container="` + flag + `"}`

	// No container yet: not ready, no series of it (never zeros), still serving.
	if code, body := sc.get(t, "/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "not ready") {
		t.Errorf("/healthz before the container: %d %q", code, body)
	}
	_, body := sc.get(t, "/metrics")
	if _, ok := e2e.SeriesValue(body, cpuWaiting+label); ok || strings.Contains(body, "cgroup_monitor_sc_monitored_cpu_psi{") {
		t.Errorf("series before the container:\n%s", body)
	}
	if v, ok := e2e.SeriesValue(body, "resctrl_mon_sidecar_ready"); !ok || v != 0 {
		t.Errorf("resctrl_mon_sidecar_ready before the container: %v, %v", v, ok)
	}

	id, err := pm.Run(e2e.PodmanRunOptions{Name: "target", Rootfs: rootfs, Detach: true, Args: burner(),
		Pod: pod.Name, Flags: []string{"--volume", flagDir + ":/run/pid_flag:ro"}})
	if err != nil {
		t.Fatal(err)
	}
	init, err := pm.PID(id)
	if err != nil {
		t.Fatal(err)
	}
	infra, err := pm.PID(pod.InfraID)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := nsOf(t, init, "pid"), nsOf(t, infra, "pid"); a != b {
		t.Fatalf("the pod does not share its process namespace: %s and %s", a, b)
	}

	health := sc.waitHealth(t, http.StatusOK, time.Minute)
	t.Logf("ready: %s", strings.TrimSpace(health))
	// The process found is the container's: same cgroups as its init.
	var found int
	if _, err := fmt.Sscanf(health, "ok: pid %d,", &found); err != nil {
		t.Fatalf("/healthz %q: %v", health, err)
	}
	if a, b := cgroupsOf(t, found), cgroupsOf(t, init); a != b {
		t.Errorf("found pid %d in\n%s\nthe container's init %d is in\n%s", found, a, init, b)
	}

	_, body = sc.get(t, "/metrics")
	first, ok := e2e.SeriesValue(body, cpuWaiting+label)
	if !ok {
		t.Fatalf("no %s%s once ready:\n%s", cpuWaiting, label, body)
	}
	for _, s := range []string{"resctrl_mon_pressure_memory_waiting_seconds_total" + label, "resctrl_mon_pressure_io_waiting_seconds_total" + label, "resctrl_mon_sidecar_ready"} {
		if _, ok := e2e.SeriesValue(body, s); !ok {
			t.Errorf("no %s", s)
		}
	}
	checkSeedMetrics(t, body)
	var last float64
	err = poll.Until(time.Minute, func() error {
		_, body := sc.get(t, "/metrics")
		last, _ = e2e.SeriesValue(body, cpuWaiting+label)
		if last <= first {
			return fmt.Errorf("%s stays at %v", cpuWaiting, last)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s%s rose from %v to %v", cpuWaiting, label, first, last)

	if err := pm.Remove(id); err != nil {
		t.Fatal(err)
	}
	body = sc.waitHealth(t, http.StatusServiceUnavailable, time.Minute)
	t.Logf("after the container went: %s", strings.TrimSpace(body))
	_, body = sc.get(t, "/metrics")
	if _, ok := e2e.SeriesValue(body, cpuWaiting+label); ok {
		t.Errorf("%s still exported after the container went", cpuWaiting)
	}
	select {
	case <-sc.exited:
		t.Fatalf("sidecar exited when its container went: %v\n%s", sc.err, sc.logs())
	default:
	}
	sc.stop(t)
	t.Logf("sidecar log:\n%s", sc.logs())
}

// checkSeedMetrics checks cgroup_monitor_sc's gauges are there with exactly its labels: type and
// window, cpu with type "some" only.
func checkSeedMetrics(t *testing.T, body string) {
	t.Helper()
	for _, name := range []string{"cpu", "mem", "io"} {
		metric := "cgroup_monitor_sc_monitored_" + name + "_psi"
		types := []string{"some", "full"}
		if name == "cpu" {
			types = types[:1]
		}
		for _, typ := range types {
			for _, window := range []string{"10s", "60s", "300s", "total"} {
				s := fmt.Sprintf(`%s{type=%q,window=%q}`, metric, typ, window)
				if v, ok := e2e.SeriesValue(body, s); !ok || v < 0 {
					t.Errorf("seed metric %s: %v, %v", s, v, ok)
				}
			}
		}
		n := 0
		for line := range strings.Lines(body) {
			if strings.HasPrefix(line, metric+"{") {
				n++
			}
		}
		if n != 4*len(types) {
			t.Errorf("%d series of %s, want %d", n, metric, 4*len(types))
		}
	}
	if _, ok := e2e.SeriesValue(body, `cgroup_monitor_sc_monitored_cpu_psi{type="full",window="total"}`); ok {
		t.Error("the seed had no cpu full series")
	}
}

// TestSidecarByName finds the container by its Kubernetes name, from the bind mount the
// kubelet makes for its termination log (<kubelet>/pods/<uid>/containers/<name>/<id>),
// made here as the kubelet would ask the runtime for it.
func TestSidecarByName(t *testing.T) {
	t.Parallel()
	pm := e2e.Podman(t)
	rootfs := e2e.Rootfs(t, nil)
	pod := sharedPod(t, pm)
	kubelet := t.TempDir()
	termLog := func(uid, name string) string {
		p := filepath.Join(kubelet, "pods", uid, "containers", name, e2e.RandomName(""))
		writeTestFile(t, p, "")
		return p + ":/dev/termination-log"
	}
	// Another container of the pod, to be told apart from.
	if _, err := pm.Run(e2e.PodmanRunOptions{Name: "other", Rootfs: rootfs, Detach: true, Args: []string{"sleep", "1000"},
		Pod: pod.Name, Flags: []string{"--volume", termLog("3f6e0c62-0d7a-4b1e-9d0c-5a8f0e6b1c2d", "other")}}); err != nil {
		t.Fatal(err)
	}
	sc := startSidecar(t, "--container-name", "app")
	sc.waitHealth(t, http.StatusServiceUnavailable, time.Minute)
	id, err := pm.Run(e2e.PodmanRunOptions{Name: "app", Rootfs: rootfs, Detach: true, Args: []string{"sleep", "1000"},
		Pod: pod.Name, Flags: []string{"--volume", termLog("3f6e0c62-0d7a-4b1e-9d0c-5a8f0e6b1c2d", "app")}})
	if err != nil {
		t.Fatal(err)
	}
	init, err := pm.PID(id)
	if err != nil {
		t.Fatal(err)
	}
	health := sc.waitHealth(t, http.StatusOK, time.Minute)
	if !strings.Contains(health, fmt.Sprintf("pid %d,", init)) {
		t.Errorf("/healthz %q: want the app's init, pid %d", health, init)
	}
	_, body := sc.get(t, "/metrics")
	if _, ok := e2e.SeriesValue(body, `resctrl_mon_pressure_cpu_waiting_seconds_total{container="app"}`); !ok {
		t.Errorf("no series labelled with the container name:\n%s", body)
	}
	sc.stop(t)
}

// sharedPod makes a pod as Kubernetes makes one with shareProcessNamespace: its members
// share the infra container's network, IPC, UTS and process namespaces.
func sharedPod(t *testing.T, pm *e2e.PodmanRunner) e2e.PodmanPod {
	t.Helper()
	pod, err := pm.CreatePod(e2e.PodOptions{Name: e2e.RandomName("psi-"), Flags: []string{"--share", "ipc,net,uts,pid"}})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

func nsOf(t *testing.T, pid int, ns string) string {
	t.Helper()
	l, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, ns))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func cgroupsOf(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("pid %d is gone", pid)
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
