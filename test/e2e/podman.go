package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// podmanTimeout bounds each podman command, an attached run included.
const podmanTimeout = 2 * time.Minute

// PodmanRunner drives podman with state of its own: storage (--root, --runroot), libpod's
// temporary state (--tmpdir), file locks under it, and an empty default hooks directory. So
// tests never touch the host's podman containers or hooks (the host may have resctrl-mon's
// hook installed in /usr/share/containers/oci/hooks.d), and parallel tests never see each
// other's containers.
type PodmanRunner struct {
	Bin     string
	Root    string // --root: container storage
	RunRoot string // --runroot: storage's runtime state
	TmpDir  string // --tmpdir: libpod's runtime state (exit files, attach sockets, locks)
	Conf    string // containers.conf, given in CONTAINERS_CONF

	t       testing.TB
	base    string
	noHooks string       // the empty hooks directory used when a run names none
	runs    atomic.Int64 // numbers each run's --cidfile

	mu      sync.Mutex
	noInfra map[string]bool // pods made by CreatePod, by name and ID: true for --infra=false
	history []string        // every command run, for the record (see History)
}

// PodmanRunOptions describe one `podman run`.
type PodmanRunOptions struct {
	// Runtime is the OCI runtime, "runc" or "crun"; "runc" when empty. crun needs PrepareCrun
	// on a hybrid cgroup machine.
	Runtime string
	// HooksDir is the hooks.d directory (see WriteHooksDir); when empty an empty directory,
	// never the host's.
	HooksDir string
	// Name is the container's name; podman makes one up when empty.
	Name string
	// Rootfs is the root filesystem (see Rootfs), given with --rootfs and --read-only: no
	// image and no registry are involved, and the shared rootfs is never written.
	Rootfs string
	// Args is the command line, for instance "sh", "-c", "…".
	Args []string
	// Pod is a pod made by CreatePod, by name or ID, for `podman run --pod`. The container
	// then shares the pod's namespaces (its network included) as podman makes it.
	Pod string
	// Annotations are given with --annotation.
	Annotations map[string]string
	// Detach runs the container in the background (-d); Run then returns its ID.
	Detach bool
	// Flags are more `podman run` flags, for instance "--rm" or "--env=K=V".
	Flags []string
}

// Podman returns a runner with fresh private state. The test is skipped where podman is
// missing or the test is not root, unless RESCTRLSIM_REQUIRE=1. When the test ends every
// container is removed, whatever podman left mounted under the private directories is
// unmounted, and the directories are removed. As with Runtime, each container's removal is
// registered when it is created, so it runs before the removal of what the test set up
// before (hooks directories, a resctrl simulator); the runner belongs to the test that made
// it.
func Podman(t testing.TB) *PodmanRunner {
	t.Helper()
	requireRoot(t)
	bin := lookBin(t, "podman")
	base := shortTempDir(t, "e2e-pm-") // short: attach sockets live under it
	p := &PodmanRunner{
		t:       t,
		base:    base,
		Bin:     bin,
		Root:    filepath.Join(base, "root"),
		RunRoot: filepath.Join(base, "run"),
		TmpDir:  filepath.Join(base, "tmp"),
		Conf:    filepath.Join(base, "containers.conf"),
		noHooks: filepath.Join(base, "hooks.d"),
		noInfra: map[string]bool{},
	}
	for _, d := range []string{p.Root, p.RunRoot, p.TmpDir, p.noHooks, filepath.Join(base, "networks")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatalf("e2e: podman state dir: %v", err)
		}
	}
	// lock_type "file": podman's default locks are slots in one shared memory segment
	// (/dev/shm/libpod_lock) for every podman on the host. File locks under --tmpdir keep all
	// of a runner's state in its own directories, so nothing a test does, or leaks if it dies
	// before its cleanup, touches the locks of the host's or other tests' podman. No event
	// log (nothing reads it), and network configuration in the runner's directory too.
	// default_ulimits rather than --ulimit on each run: a pod's infra container is made by
	// `podman pod create`, which has no --ulimit, and would not start with podman's own
	// defaults (see podmanUlimits). CONTAINERS_CONF replaces the host's containers.conf files
	// rather than adding to them.
	ulimits, err := podmanUlimits()
	if err != nil {
		t.Fatalf("e2e: %v", err)
	}
	conf := fmt.Sprintf(`[containers]
default_ulimits = [%q, %q]

[engine]
lock_type = "file"
events_logger = "none"

[network]
network_config_dir = %q
`, ulimits[0], ulimits[1], filepath.Join(base, "networks"))
	if err := os.WriteFile(p.Conf, []byte(conf), 0o644); err != nil {
		t.Fatalf("e2e: write containers.conf: %v", err)
	}

	// Registered after shortTempDir's removal of base, so it runs before it.
	t.Cleanup(func() {
		// Pods first: a pod's infra container is removed only with its pod.
		if _, err := p.Command("pod", "rm", "--all", "--force", "--time", "0"); err != nil {
			t.Errorf("e2e: cleanup: %v", err)
		}
		if _, err := p.Command("rm", "--all", "--force", "--time", "0"); err != nil {
			t.Errorf("e2e: cleanup: %v", err)
		}
		if err := unmountUnder(base); err != nil {
			t.Errorf("e2e: cleanup: %v", err)
		}
	})
	return p
}

// Run runs a container. Attached, it waits for the container and returns its stdout;
// detached, it returns the container's ID once it runs. An error carries podman's stderr.
func (p *PodmanRunner) Run(o PodmanRunOptions) (string, error) {
	if o.Rootfs == "" || len(o.Args) == 0 {
		return "", fmt.Errorf("podman run: Rootfs and Args are required")
	}
	runtime := o.Runtime
	if runtime == "" {
		runtime = "runc"
	}
	hooksDir := o.HooksDir
	if hooksDir == "" {
		hooksDir = p.noHooks
	}
	args := []string{"--runtime", runtime, "--hooks-dir", hooksDir, "run",
		// The shared rootfs stays as built; podman mounts tmpfs on /tmp, /run and /var/tmp.
		"--read-only",
	}
	if o.Pod != "" {
		args = append(args, "--pod", o.Pod)
	}
	if o.Pod == "" || p.podWithoutInfra(o.Pod) {
		// No network to set up (netavark is never called) and none needed. A member of a
		// pod with an infra container joins the infra's network namespace instead.
		args = append(args, "--network", "none")
	}
	if o.Detach {
		args = append(args, "--detach")
	}
	if o.Name != "" {
		args = append(args, "--name", o.Name)
	}
	for _, k := range slices.Sorted(maps.Keys(o.Annotations)) {
		args = append(args, "--annotation", k+"="+o.Annotations[k])
	}
	// The ID of the container, even one that failed to start, to remove it when the test ends.
	cidFile := filepath.Join(p.base, fmt.Sprintf("cid-%d", p.runs.Add(1)))
	args = append(args, "--cidfile", cidFile)
	args = append(args, o.Flags...)
	args = append(args, "--rootfs", o.Rootfs)
	args = append(args, o.Args...)
	out, err := p.Command(args...)
	if cid, readErr := os.ReadFile(cidFile); readErr == nil && len(cid) > 0 {
		p.t.Cleanup(func() {
			// --ignore: an --rm container, or one the test removed, is gone already.
			if _, err := p.Command("rm", "--force", "--ignore", "--time", "0", string(cid)); err != nil {
				p.t.Errorf("e2e: cleanup: %v", err)
			}
		})
	}
	if o.Detach {
		return strings.TrimSpace(string(out)), err
	}
	return string(out), err
}

// Remove removes a container, killing it at once if it runs (no grace period: a shell as
// init ignores SIGTERM, and podman would wait 10 seconds before SIGKILL).
func (p *PodmanRunner) Remove(name string) error {
	_, err := p.Command("rm", "--force", "--time", "0", name)
	return err
}

// PID returns the host pid of a running container's init process.
func (p *PodmanRunner) PID(name string) (int, error) {
	out, err := p.Command("inspect", "--format", "{{.State.Pid}}", name)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return 0, fmt.Errorf("podman inspect %s: pid %q: %w", name, out, err)
	}
	if pid == 0 {
		return 0, fmt.Errorf("podman inspect %s: container is not running", name)
	}
	return pid, nil
}

// History returns the command lines run so far, each with the runner's state directory
// written as $STATE: how a test made what it found, for a record of it.
func (p *PodmanRunner) History() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, len(p.history))
	for i, h := range p.history {
		out[i] = strings.ReplaceAll(h, p.base, "$STATE")
	}
	return out
}

// Command runs podman with the runner's private state and the given arguments, and returns
// its stdout; an error carries its stderr.
func (p *PodmanRunner) Command(args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), podmanTimeout)
	defer cancel()
	global := []string{
		"--root", p.Root,
		"--runroot", p.RunRoot,
		"--tmpdir", p.TmpDir,
		// No systemd here to manage cgroups; cgroupfs writes them directly.
		"--cgroup-manager", "cgroupfs",
		// With --rootfs nothing is stored; vfs needs no kernel mounts of its own.
		"--storage-driver", "vfs",
	}
	p.mu.Lock()
	p.history = append(p.history, strings.Join(append([]string{"podman"}, append(global, args...)...), " "))
	p.mu.Unlock()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, p.Bin, append(global, args...)...)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+p.Conf)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// conmon outlives a detached run; it must not hold our pipes (it does not, but a hang
	// here would be silent).
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("podman %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// podmanUlimits returns ulimit settings ("nofile=N:N", "nproc=N:N") for open files and
// processes at limits this process may give. Podman's defaults (1048576 for both) are above the hard limits here, and root on
// these machines lacks CAP_SYS_RESOURCE, so the runtime's setrlimit in the container fails
// ("error setting rlimit type 7: operation not permitted") and no container starts. Podman
// lowers its own process limit to kernel.pid_max, which its children then cannot exceed.
func podmanUlimits() ([]string, error) {
	var nofile, nproc unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile); err != nil {
		return nil, fmt.Errorf("get open files limit: %w", err)
	}
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &nproc); err != nil {
		return nil, fmt.Errorf("get process limit: %w", err)
	}
	data, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		return nil, fmt.Errorf("read pid_max: %w", err)
	}
	pidMax, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("parse pid_max %q: %w", data, err)
	}
	procs := min(nproc.Max, pidMax)
	return []string{
		fmt.Sprintf("nofile=%d:%d", nofile.Max, nofile.Max),
		fmt.Sprintf("nproc=%d:%d", procs, procs),
	}, nil
}

// unmountUnder lazily unmounts every mount at or below dir, deepest first.
func unmountUnder(dir string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("read mounts: %w", err)
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			points = append(points, mp)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read mounts: %w", err)
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	for _, mp := range points {
		if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil {
			return fmt.Errorf("unmount %s: %w", mp, err)
		}
	}
	return nil
}
