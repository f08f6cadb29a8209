package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

// BundleOptions are what a test chooses about a container; the rest of the spec is
// defaultSpec's.
type BundleOptions struct {
	// Args is the container's command line; required.
	Args []string
	// Env is added to the default environment (PATH only).
	Env []string
	// Annotations are copied to the spec, and so into the state that hooks see. NewBundle
	// adds run.oci.hooks.stdout and run.oci.hooks.stderr unless set here: see HookStderrPath.
	Annotations map[string]string
	// Hooks are the spec's hooks, nil for none.
	Hooks *specs.Hooks
	// ClosID, when set, sets linux.intelRdt.closID: the runtime then assigns the container to
	// that resctrl class itself (runc looks for a mounted resctrl filesystem to do so).
	ClosID string
	// IntelRdt, when set, is linux.intelRdt as it is (ClosID is then ignored): for the
	// settings without a closID.
	IntelRdt *specs.LinuxIntelRdt
	// Hostname is the container's host name; "e2e" when empty.
	Hostname string
	// HostNetwork leaves the container in the host's network namespace instead of a new one
	// (which has only a loopback device).
	HostNetwork bool
	// Parent is the directory the bundle is made in (a tmpfs, as /run holds containerd's and
	// CRI-O's bundles); the system's temporary directory when empty.
	Parent string
}

// Bundle is an OCI bundle directory. Change Spec and call Save to rewrite config.json.
type Bundle struct {
	Dir  string
	Spec *specs.Spec
}

// NewBundle makes a bundle in a fresh directory, removed when the test ends, whose config.json
// is the default spec with o applied and root.path pointing at rootfs (read-only, so the
// shared rootfs is never written). Each bundle gets a cgroup path of its own, so containers
// of parallel tests never share a cgroup.
func NewBundle(t testing.TB, rootfs string, o BundleOptions) *Bundle {
	t.Helper()
	if len(o.Args) == 0 {
		t.Fatal("e2e: NewBundle: Args is empty")
	}
	// A short path, not t.TempDir (which embeds the test's name): runtimes may derive unix
	// socket paths, limited to 108 bytes, from bundle and state paths.
	b := &Bundle{Dir: shortTempDirIn(t, o.Parent, "e2e-bundle-"), Spec: defaultSpec(rootfs, o)}
	if b.Spec.Annotations == nil {
		b.Spec.Annotations = map[string]string{}
	}
	for k, path := range map[string]string{crunHookStdout: b.HookStdoutPath(), crunHookStderr: b.HookStderrPath()} {
		if _, ok := b.Spec.Annotations[k]; !ok {
			b.Spec.Annotations[k] = path
		}
	}
	if err := b.Save(); err != nil {
		t.Fatalf("e2e: %v", err)
	}
	// Registered before any container of the bundle is created, so it runs after their
	// force-deletes (see NewRuntime).
	t.Cleanup(func() { b.leftBehind(t) })
	return b
}

// leftBehind fails the test for any process still in the bundle's cgroup once its
// containers were deleted, and kills it: such a container ran on, reparented to init, for
// as long as its workload lasted. It then removes the cgroup from every hierarchy, where a
// runtime that was killed or failed half-way left it for good.
func (b *Bundle) leftBehind(t testing.TB) {
	if b.Spec.Linux == nil || !strings.HasPrefix(b.Spec.Linux.CgroupsPath, "/resctrl-e2e-") {
		return
	}
	path := b.Spec.Linux.CgroupsPath
	dirs, err := cgroupDirs(path)
	if err != nil {
		t.Errorf("e2e: cgroups of bundle %s: %v", b.Dir, err)
		return
	}
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil || len(strings.Fields(string(data))) == 0 {
			continue
		}
		pids := strings.Fields(string(data))
		t.Errorf("e2e: processes %v still in the cgroup %s of bundle %s after the test deleted its containers: killed", pids, path, b.Dir)
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		break
	}
	// A killed process leaves its cgroup once it is reaped (by init, here).
	if err := poll.Until(5*time.Second, func() error { return removeCgroup(path) }); err != nil {
		t.Errorf("e2e: %v", err)
	}
}

// Save writes Spec to config.json.
func (b *Bundle) Save() error {
	data, err := json.MarshalIndent(b.Spec, "", "\t")
	if err != nil {
		return fmt.Errorf("encode bundle config: %w", err)
	}
	if err := os.WriteFile(b.ConfigPath(), data, 0o644); err != nil {
		return fmt.Errorf("write bundle config: %w", err)
	}
	return nil
}

// ConfigPath is the path of the bundle's config.json.
func (b *Bundle) ConfigPath() string { return filepath.Join(b.Dir, "config.json") }

// StdoutPath and StderrPath are the files that Runtime.Create and Runtime.Run connect the
// container's stdout and stderr to. The runtime's own messages from those calls land in the
// stderr file too, before the container's.
func (b *Bundle) StdoutPath() string { return filepath.Join(b.Dir, "stdout") }
func (b *Bundle) StderrPath() string { return filepath.Join(b.Dir, "stderr") }

// specVersion is the ociVersion of bundles: what `runc spec` writes. crun 1.8 refuses any
// version but 1.0.x ("unknown version specified"), the 1.3.0 of the spec module included; the
// fields used here all exist in 1.0 (intelRdt.closID is from 1.0.0).
const specVersion = "1.0.2"

// crun's annotations naming files that receive its hooks' output, which it otherwise drops;
// runc ignores them (it puts a failing hook's output in its error message).
const (
	crunHookStdout = "run.oci.hooks.stdout"
	crunHookStderr = "run.oci.hooks.stderr"
)

// HookStdoutPath and HookStderrPath are the files that crun appends its hooks' output to: a
// failing hook's message shows nowhere else with crun. Runtime errors quote what a call added.
func (b *Bundle) HookStdoutPath() string { return filepath.Join(b.Dir, "hooks.stdout") }
func (b *Bundle) HookStderrPath() string { return filepath.Join(b.Dir, "hooks.stderr") }

// defaultSpec is what `runc spec` writes, made fit for tests: no terminal (nothing reads
// one), the shared rootfs read-only, no seccomp (the tests exercise hooks, not confinement),
// a unique cgroup path, and the test's command, annotations and hooks.
func defaultSpec(rootfs string, o BundleOptions) *specs.Spec {
	caps := []string{"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"}
	hostname := o.Hostname
	if hostname == "" {
		hostname = "e2e"
	}
	namespaces := []specs.LinuxNamespace{
		{Type: specs.PIDNamespace},
		{Type: specs.IPCNamespace},
		{Type: specs.UTSNamespace},
		{Type: specs.MountNamespace},
	}
	if !o.HostNetwork {
		namespaces = append(namespaces, specs.LinuxNamespace{Type: specs.NetworkNamespace})
	}
	s := &specs.Spec{
		Version: specVersion,
		Process: &specs.Process{
			Terminal: false,
			User:     specs.User{UID: 0, GID: 0},
			Args:     append([]string(nil), o.Args...),
			Env:      append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, o.Env...),
			Cwd:      "/",
			Capabilities: &specs.LinuxCapabilities{
				Bounding:  caps,
				Effective: caps,
				Permitted: caps,
			},
			Rlimits:         []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1024, Soft: 1024}},
			NoNewPrivileges: true,
		},
		Root:        &specs.Root{Path: rootfs, Readonly: true},
		Hostname:    hostname,
		Annotations: maps.Clone(o.Annotations),
		Hooks:       o.Hooks,
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
			{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}},
			{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
			{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
			{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
			{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup", Options: []string{"nosuid", "noexec", "nodev", "relatime", "ro"}},
			// The rootfs is read-only; scratch space is private to each container.
			{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777", "size=65536k"}},
		},
		Linux: &specs.Linux{
			// A top-level cgroup of its own: the runtime removes it on delete, where a
			// nested path would leave its parent behind in every hierarchy.
			CgroupsPath: "/resctrl-e2e-" + randomHex(8),
			Resources: &specs.LinuxResources{
				Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
			},
			Namespaces: namespaces,
			MaskedPaths: []string{
				"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
				"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi",
			},
			ReadonlyPaths: []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"},
		},
	}
	switch {
	case o.IntelRdt != nil:
		rdt := *o.IntelRdt
		s.Linux.IntelRdt = &rdt
	case o.ClosID != "":
		s.Linux.IntelRdt = &specs.LinuxIntelRdt{ClosID: o.ClosID}
	}
	return s
}

// randomHex returns n random bytes in hex, for names that must not collide across parallel
// tests and test binaries.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}
