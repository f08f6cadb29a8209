package e2e

import (
	"bufio"
	"slices"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestParseCgroupMounts(t *testing.T) {
	const mountinfo = `25 1 252:0 / / rw,relatime - ext4 /dev/vda rw
33 26 0:28 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw
40 26 0:35 / /sys/fs/cgroup/pids rw,relatime shared:16 - cgroup cgroup rw,pids
41 26 0:36 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
50 26 0:35 /sub /mnt/pids\040sub rw - cgroup cgroup rw,pids
`
	mounts, err := parseCgroupMounts(bufio.NewScanner(strings.NewReader(mountinfo)))
	if err != nil {
		t.Fatal(err)
	}
	if len(mounts) != 4 {
		t.Fatalf("got %d cgroup mounts, want 4: %+v", len(mounts), mounts)
	}
	if m := mounts[1]; m.fstype != "cgroup" || m.mountPoint != "/sys/fs/cgroup/pids" || m.superOpts[1] != "pids" {
		t.Errorf("pids mount: %+v", m)
	}
	sub := mounts[3]
	if sub.root != "/sub" || sub.mountPoint != "/mnt/pids sub" {
		t.Errorf("escaped mount: %+v", sub)
	}
	for _, tc := range []struct {
		path, want string
		ok         bool
	}{
		{"/sub/ctr", "/mnt/pids sub/ctr", true},
		{"/sub", "/mnt/pids sub", true},
		{"/subway", "", false},
		{"/other", "", false},
	} {
		if got, ok := sub.dirOf(tc.path); got != tc.want || ok != tc.ok {
			t.Errorf("dirOf(%q) = %q, %v; want %q, %v", tc.path, got, ok, tc.want, tc.ok)
		}
	}
	if got, _ := mounts[1].dirOf("/resctrl-e2e-1"); got != "/sys/fs/cgroup/pids/resctrl-e2e-1" {
		t.Errorf("dirOf under root mount = %q", got)
	}
}

func TestEnsureRootfsRejects(t *testing.T) {
	if static, err := isStatic(busyboxPath); err != nil || !static {
		unavailable(t, "e2e: %v", errNoStaticBusybox)
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"env", "/bin/sh", "dynamically linked"},
		{"a/b", busyboxPath, "plain file name"},
		{"missing", "/nonexistent/e2e-helper", "no such file"},
	} {
		_, err := ensureRootfs(map[string]string{tc.name: tc.path}, []string{tc.name})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("extra %s=%s: error %v, want one saying %q", tc.name, tc.path, err, tc.want)
		}
	}
}

func TestDefaultSpec(t *testing.T) {
	a := defaultSpec("/rootfs", BundleOptions{Args: []string{"true"}, ClosID: "gold"})
	b := defaultSpec("/rootfs", BundleOptions{Args: []string{"true"}, HostNetwork: true})
	if a.Linux.CgroupsPath == b.Linux.CgroupsPath {
		t.Errorf("two bundles share cgroup path %s", a.Linux.CgroupsPath)
	}
	if a.Linux.IntelRdt == nil || a.Linux.IntelRdt.ClosID != "gold" || b.Linux.IntelRdt != nil {
		t.Errorf("intelRdt: %+v and %+v, want closID gold and none", a.Linux.IntelRdt, b.Linux.IntelRdt)
	}
	if !a.Root.Readonly || a.Root.Path != "/rootfs" || a.Process.Terminal {
		t.Errorf("root %+v, terminal %v: want /rootfs read-only, no terminal", a.Root, a.Process.Terminal)
	}
	hasNet := func(s []specs.LinuxNamespace) bool {
		return slices.ContainsFunc(s, func(n specs.LinuxNamespace) bool { return n.Type == specs.NetworkNamespace })
	}
	if !hasNet(a.Linux.Namespaces) || hasNet(b.Linux.Namespaces) {
		t.Errorf("network namespace: %v and %v, want one only in the first", a.Linux.Namespaces, b.Linux.Namespaces)
	}
}

// The cleanups remove what cgroupDirs gives: never a hierarchy's root, whatever a pod with no
// cgroup of its own reports, and for a cgroup path its directory in each hierarchy.
func TestCgroupDirs(t *testing.T) {
	t.Parallel()
	for _, root := range []string{"", "/", "//", "relative"} {
		if dirs, err := cgroupDirs(root); err != nil || dirs != nil {
			t.Errorf("cgroupDirs(%q) = %q, %v; want none", root, dirs, err)
		}
	}
	mounts, err := readCgroupMounts()
	if err != nil || len(mounts) == 0 {
		t.Skipf("no cgroup mounts here: %v", err)
	}
	dirs, err := cgroupDirs("/resctrl-e2e-pod-x")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("cgroupDirs = %q, %v; want a directory per hierarchy", dirs, err)
	}
	for _, d := range dirs {
		if !strings.HasSuffix(d, "/resctrl-e2e-pod-x") {
			t.Errorf("%s is not the cgroup's directory", d)
		}
	}
}
