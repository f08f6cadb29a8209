package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

// criTimeout bounds each crictl call (crictl's own --timeout is set the same).
const criTimeout = 2 * time.Minute

// CRI drives a CRI runtime (CRI-O, containerd) with crictl, as kubelet would over the same
// socket. Pods and containers are described by PodSpec and ContainerSpec; the JSON configs
// crictl reads are written by CRI itself.
type CRI struct {
	// Crictl is crictl's path; Endpoint the runtime's socket, "unix:///…".
	Crictl, Endpoint string
	// ConfigDir holds crictl's own config and the pod and container configs written for it.
	ConfigDir string
	// LogDir holds each pod's log directory (Pod.LogDir).
	LogDir string

	t       testing.TB
	seq     atomic.Int64
	mu      sync.Mutex
	cgroups []string // every pod's cgroup parent, removed by removeCgroups
}

// PodSpec is what a test chooses about a pod sandbox.
type PodSpec struct {
	// Name, Namespace and UID are the sandbox's metadata, as kubelet sends them.
	Name, Namespace, UID string
	// Kubelet adds the labels kubelet puts on every pod sandbox and container
	// (io.kubernetes.pod.{uid,name,namespace}, io.kubernetes.container.name), from which
	// CRI-O makes the annotations of those names. Without them CRI-O has only the metadata.
	Kubelet bool
	// Labels and Annotations are the sandbox's own.
	Labels, Annotations map[string]string
	// PodPIDNamespace shares one PID namespace across the pod (kubelet's
	// shareProcessNamespace). CRI-O then needs an infra container, which on machines whose
	// root lacks CAP_SYS_RESOURCE cannot start (runc cannot lower its oom_score_adj).
	PodPIDNamespace bool
	// RuntimeHandler is the runtime handler for the pod (crictl runp --runtime), "" for the
	// runtime's default.
	RuntimeHandler string
}

// ContainerSpec is what a test chooses about a container.
type ContainerSpec struct {
	// Name is the container's name in the pod.
	Name string
	// Command is the container's command, from the image: the rootfs given to StartCRIO or
	// StartContainerd (busybox and the extra binaries the test put in it).
	Command []string
	// Labels and Annotations are the container's own; Kubelet on the pod adds kubelet's.
	Labels, Annotations map[string]string
}

// Pod is a pod sandbox created by RunPod.
type Pod struct {
	ID   string
	Spec PodSpec
	// CgroupParent is the pod's cgroup (as /proc/PID/cgroup names it); the daemon's cleanup
	// removes it, the runtimes do not.
	CgroupParent string
	// LogDir is the pod's log directory; a container's log is LogDir/<name>.log.
	LogDir string
	config string // the pod's JSON config, which crictl create reads again
}

// criPrerequisites skips the test (unless RESCTRLSIM_REQUIRE=1) where what a CRI daemon
// needs is missing: root, the daemon built into the test cache (RuntimeBins), crictl, runc,
// and podman (which puts TestImage in the daemon's store). It checks them before anything is
// built or started, and returns the daemon's bin directory and crictl's and runc's paths.
func criPrerequisites(t testing.TB, daemon string) (bin, crictl, runc string) {
	t.Helper()
	requireRoot(t)
	bin = RuntimeBins(t, daemon)
	crictl = filepath.Join(RuntimeBins(t, "crictl"), "crictl")
	runc = lookBin(t, "runc")
	lookBin(t, "podman")
	return bin, crictl, runc
}

// daemonEnv is a CRI daemon's environment: ours, with the bin directory it was built into
// (containerd finds its shim there) ahead of the system's PATH.
func daemonEnv(binDir string) []string {
	return append(os.Environ(), "PATH="+binDir+":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
}

// newCRI writes crictl's config for the endpoint into a fresh directory under base.
func newCRI(t testing.TB, crictl, endpoint, base string) *CRI {
	t.Helper()
	c := &CRI{t: t, Crictl: crictl, Endpoint: endpoint, ConfigDir: filepath.Join(base, "crictl"), LogDir: filepath.Join(base, "pods")}
	for _, d := range []string{c.ConfigDir, c.LogDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatalf("e2e: %v", err)
		}
	}
	// A config of its own: crictl otherwise reads the host's /etc/crictl.yaml.
	conf := fmt.Sprintf("runtime-endpoint: %s\nimage-endpoint: %s\ntimeout: %d\ndebug: false\npull-image-on-create: false\n",
		endpoint, endpoint, int(criTimeout/time.Second))
	if err := os.WriteFile(c.configPath(), []byte(conf), 0o644); err != nil {
		t.Fatalf("e2e: %v", err)
	}
	return c
}

func (c *CRI) configPath() string { return filepath.Join(c.ConfigDir, "crictl.yaml") }

// answers is nil once the runtime answers crictl: what a daemon's start waits for.
func (c *CRI) answers() error {
	_, err := c.Command("version")
	return err
}

// Command runs crictl with the given arguments and returns its stdout; an error carries its
// stderr.
func (c *CRI) Command(args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), criTimeout+10*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, c.Crictl, append([]string{"--config", c.configPath()}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("crictl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// id runs a crictl command that prints one ID.
func (c *CRI) id(args ...string) (string, error) {
	out, err := c.Command(args...)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(out))
	if id == "" || strings.ContainsAny(id, " \n") {
		return "", fmt.Errorf("crictl %s: want one ID, got %q", strings.Join(args, " "), out)
	}
	return id, nil
}

// nonNil returns a copy of m, empty rather than nil (the configs then say {}, not null).
func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}

// CRI namespace modes (k8s.io/cri-api NamespaceMode).
const (
	nsPod       = 0
	nsContainer = 1
	nsNode      = 2
)

// kubeletPodLabels are the labels kubelet puts on a pod sandbox (and, with the container's
// name, on each of its containers).
func kubeletPodLabels(s PodSpec) map[string]string {
	return map[string]string{
		"io.kubernetes.pod.uid":       s.UID,
		"io.kubernetes.pod.name":      s.Name,
		"io.kubernetes.pod.namespace": s.Namespace,
	}
}

// namespaceOptions are a pod's and its containers': the host's network (no CNI is set up),
// and a PID namespace per container unless the pod shares one, as kubelet does.
func namespaceOptions(s PodSpec) map[string]int {
	pid := nsContainer
	if s.PodPIDNamespace {
		pid = nsPod
	}
	return map[string]int{"network": nsNode, "pid": pid, "ipc": nsPod}
}

// RunPod runs `crictl runp` for a pod in a cgroup of its own.
func (c *CRI) RunPod(s PodSpec) (*Pod, error) {
	labels, annotations := nonNil(s.Labels), nonNil(s.Annotations)
	if s.Kubelet {
		maps.Copy(labels, kubeletPodLabels(s))
	}
	p := &Pod{Spec: s, CgroupParent: "/resctrl-e2e-pod-" + randomHex(6), LogDir: filepath.Join(c.LogDir, s.Name+"-"+randomHex(4))}
	if err := os.MkdirAll(p.LogDir, 0o755); err != nil {
		return nil, fmt.Errorf("run pod %s: %w", s.Name, err)
	}
	cfg := map[string]any{
		"metadata":      map[string]any{"name": s.Name, "namespace": s.Namespace, "uid": s.UID, "attempt": 0},
		"log_directory": p.LogDir,
		"labels":        labels,
		"annotations":   annotations,
		"linux": map[string]any{
			"cgroup_parent":    p.CgroupParent,
			"security_context": map[string]any{"namespace_options": namespaceOptions(s)},
		},
	}
	var err error
	if p.config, err = c.writeConfig("pod", cfg); err != nil {
		return nil, err
	}
	// Noted before the call: a runp that fails half-way may leave the cgroup.
	c.mu.Lock()
	c.cgroups = append(c.cgroups, p.CgroupParent)
	c.mu.Unlock()
	args := []string{"runp"}
	if s.RuntimeHandler != "" {
		args = append(args, "--runtime", s.RuntimeHandler)
	}
	if p.ID, err = c.id(append(args, p.config)...); err != nil {
		return nil, err
	}
	return p, nil
}

// CreateContainer runs `crictl create` for a container of the pod, from image.
func (c *CRI) CreateContainer(p *Pod, image string, s ContainerSpec) (string, error) {
	labels, annotations := nonNil(s.Labels), nonNil(s.Annotations)
	if p.Spec.Kubelet {
		maps.Copy(labels, kubeletPodLabels(p.Spec))
		labels["io.kubernetes.container.name"] = s.Name
	}
	cfg := map[string]any{
		"metadata":    map[string]any{"name": s.Name, "attempt": 0},
		"image":       map[string]any{"image": image},
		"command":     s.Command,
		"labels":      labels,
		"annotations": annotations,
		"log_path":    s.Name + ".log",
		"linux": map[string]any{
			"security_context": map[string]any{"namespace_options": namespaceOptions(p.Spec)},
		},
	}
	path, err := c.writeConfig("ctr-"+s.Name, cfg)
	if err != nil {
		return "", err
	}
	return c.id("create", p.ID, path, p.config)
}

// RunContainer creates and starts a container.
func (c *CRI) RunContainer(p *Pod, image string, s ContainerSpec) (string, error) {
	id, err := c.CreateContainer(p, image, s)
	if err != nil {
		return "", err
	}
	return id, c.Start(id)
}

// cleanLeftovers kills what the daemon under dir left running (processes naming dir: shims,
// conmon), deletes the containers under runcRoot with runc (PATH's when empty), removes what
// it left mounted under dir and the pods' cgroups.
func (c *CRI) cleanLeftovers(t testing.TB, dir, runcRoot, runc string) {
	if err := killMentioning(dir); err != nil {
		t.Errorf("e2e: cleanup: %v", err)
	}
	if err := deleteRuncContainers(runcRoot, runc); err != nil {
		t.Errorf("e2e: cleanup: %v", err)
	}
	if err := unmountUnder(dir); err != nil {
		t.Errorf("e2e: cleanup: %v", err)
	}
	if err := c.removeCgroups(); err != nil {
		t.Errorf("e2e: cleanup: %v", err)
	}
}

// removeCgroups removes the cgroups of every pod run, once the daemon's cleanup has
// removed the pods and stopped what it left running.
func (c *CRI) removeCgroups() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, cg := range c.cgroups {
		errs = append(errs, removeCgroup(cg))
	}
	return errors.Join(errs...)
}

// writeConfig writes a JSON config for crictl and returns its path.
func (c *CRI) writeConfig(kind string, cfg any) (string, error) {
	data, err := json.MarshalIndent(cfg, "", "\t")
	if err != nil {
		return "", fmt.Errorf("encode %s config: %w", kind, err)
	}
	path := filepath.Join(c.ConfigDir, fmt.Sprintf("%s-%d.json", kind, c.seq.Add(1)))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", fmt.Errorf("write %s config: %w", kind, err)
	}
	return path, nil
}

// Start, Stop, Remove, StopPod and RemovePod are crictl start, stop (no grace period: a
// shell as init ignores SIGTERM), rm, stopp and rmp.
func (c *CRI) Start(id string) error {
	_, err := c.Command("start", id)
	return err
}

func (c *CRI) Stop(id string) error {
	_, err := c.Command("stop", "--timeout", "0", id)
	return err
}

func (c *CRI) Remove(id string) error {
	_, err := c.Command("rm", id)
	return err
}

func (c *CRI) StopPod(id string) error {
	_, err := c.Command("stopp", id)
	return err
}

func (c *CRI) RemovePod(id string) error {
	_, err := c.Command("rmp", id)
	return err
}

// RemoveAll stops and removes every pod, for cleanups.
func (c *CRI) RemoveAll() error {
	_, err := c.Command("rmp", "--all", "--force")
	return err
}

// Exec runs a command in a running container (ExecSync, what kubelet's exec probes use) and
// returns its stdout.
func (c *CRI) Exec(id string, args ...string) ([]byte, error) {
	return c.Command(append([]string{"exec", "--sync", id}, args...)...)
}

// PID returns the host pid of a running container's init, from crictl inspect's info.pid
// (CRI-O and containerd both report it there).
func (c *CRI) PID(id string) (int, error) {
	out, err := c.Command("inspect", "--output", "json", id)
	if err != nil {
		return 0, err
	}
	var v struct {
		Info struct {
			Pid int `json:"pid"`
		} `json:"info"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return 0, fmt.Errorf("crictl inspect %s: decode: %w", id, err)
	}
	if v.Info.Pid <= 0 {
		return 0, fmt.Errorf("crictl inspect %s: no pid (not running?)", id)
	}
	return v.Info.Pid, nil
}

// ContainerLog returns what a container wrote so far, from its CRI log file.
func (c *CRI) ContainerLog(p *Pod, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(p.LogDir, name+".log"))
	return string(b), err
}

// WaitLog waits until a container's log holds want (a line the workload prints once it is
// set up, such as the forker's "ready").
func (c *CRI) WaitLog(p *Pod, name, want string, timeout time.Duration) error {
	return poll.Until(timeout, func() error {
		text, err := c.ContainerLog(p, name)
		if err != nil {
			return err
		}
		if !strings.Contains(text, want) {
			return fmt.Errorf("container %s has not logged %q; its log: %q", name, want, text)
		}
		return nil
	})
}
