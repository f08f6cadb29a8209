package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
)

func TestParseV2(t *testing.T) {
	t.Parallel()
	// This machine's /proc/self/cgroup (hybrid: v1 controllers and the unified hierarchy).
	const hybrid = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/0221a7dce45ba1546b24a249e07e8035\n1:cpu:/\n0::/\n"
	for _, tc := range []struct {
		name, in, want string
		err            error
	}{
		{"hybrid", hybrid, "/", nil},
		{"pure v2", "0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-ab.scope\n", "/kubepods.slice/kubepods-pod1.slice/cri-containerd-ab.scope", nil},
		{"outside our cgroup namespace", "0::/../cri-containerd-ab.scope\n", "/../cri-containerd-ab.scope", nil},
		{"a space in the path", "0::/a b\n", "/a b", nil},
		{"v1 only", "4:memory:/x\n1:cpu:/x\n", "", ErrNoUnified},
		{"empty", "", "", ErrNoUnified},
	} {
		got, err := ParseV2([]byte(tc.in))
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("%s: got %q, %v; want %q, %v", tc.name, got, err, tc.want, tc.err)
		}
	}
	if _, err := ParseV2([]byte("0::relative\n")); err == nil {
		t.Error("a relative path was accepted")
	}
}

func FuzzParseV2(f *testing.F) {
	f.Add([]byte("1:cpu:/\n0::/a/b\n"))
	f.Add([]byte("0::/../x\n"))
	f.Add([]byte("0::x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseV2(b)
		if err != nil {
			return
		}
		if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\n\x00") {
			t.Fatalf("path %q from %q", p, b)
		}
		if !strings.Contains(string(b), "0::"+p) {
			t.Fatalf("path %q is not on a 0:: line of %q", p, b)
		}
	})
}

func TestDirIn(t *testing.T) {
	t.Parallel()
	hostV2 := &mountinfo.Info{Root: "/", Mountpoint: "/sys/fs/cgroup", FSType: "cgroup2"}
	unified := &mountinfo.Info{Root: "/", Mountpoint: "/sys/fs/cgroup/unified", FSType: "cgroup2"}
	nested := &mountinfo.Info{Root: "/kubepods/pod1", Mountpoint: "/mnt/pod", FSType: "cgroup2"}
	theirs := &mountinfo.Info{Root: "/../ctr", Mountpoint: "/sys/fs/cgroup", FSType: "cgroup2"}
	for _, tc := range []struct {
		name   string
		mounts []*mountinfo.Info
		cgroup string
		want   string
	}{
		{"pure v2", []*mountinfo.Info{hostV2}, "/a/b", "/sys/fs/cgroup/a/b"},
		{"hybrid", []*mountinfo.Info{unified}, "/a/b", "/sys/fs/cgroup/unified/a/b"},
		{"root cgroup", []*mountinfo.Info{unified}, "/", "/sys/fs/cgroup/unified"},
		{"the closest root wins", []*mountinfo.Info{hostV2, nested}, "/kubepods/pod1/c", "/mnt/pod/c"},
		{"a mount of exactly the cgroup", []*mountinfo.Info{nested}, "/kubepods/pod1", "/mnt/pod"},
		{"a name that only starts like the root", []*mountinfo.Info{nested}, "/kubepods/pod10", ""},
		{"outside our namespace, through our root", []*mountinfo.Info{hostV2}, "/../ctr", ""},
		{"outside our namespace, through theirs", []*mountinfo.Info{theirs}, "/../ctr", "/sys/fs/cgroup"},
		{"below theirs", []*mountinfo.Info{theirs}, "/../ctr/sub", "/sys/fs/cgroup/sub"},
		{"no mount", nil, "/a", ""},
	} {
		got, ok := dirIn(tc.mounts, tc.cgroup)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: dirIn(%q) = %q, %v; want %q", tc.name, tc.cgroup, got, ok, tc.want)
		}
	}
}

// fakeProc writes a procfs tree: our own mountinfo, and for pid 42 its cgroup and
// mountinfo. It returns the tree's root.
func fakeProc(t *testing.T, selfMounts, cgroup, theirMounts string) string {
	t.Helper()
	root := t.TempDir()
	write(t, filepath.Join(root, "self", "mountinfo"), selfMounts)
	write(t, filepath.Join(root, "42", "cgroup"), cgroup)
	write(t, filepath.Join(root, "42", "mountinfo"), theirMounts)
	return root
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const tmpfsLine = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"

func cgroup2Line(root, mountpoint string) string {
	return "41 31 0:38 " + root + " " + mountpoint + " rw,relatime - cgroup2 cgroup2 rw\n"
}

// On the host (or sharing its cgroup namespace) our own mount shows the cgroup.
func TestProcessDirOwnMount(t *testing.T) {
	t.Parallel()
	mnt := t.TempDir()
	proc := fakeProc(t, tmpfsLine+cgroup2Line("/", mnt), "1:cpu:/x\n0::/pod/ctr\n", "")
	want := filepath.Join(mnt, "pod", "ctr")
	if err := os.MkdirAll(want, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Host{Proc: proc}.ProcessDir(42)
	if err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}

// A sidecar in its own cgroup namespace sees the container's cgroup as "/../ctr" and reaches
// it through the container's own cgroup2 mount, whose root it also sees as "/../ctr".
func TestProcessDirThroughTheirMount(t *testing.T) {
	t.Parallel()
	proc := fakeProc(t, cgroup2Line("/", "/sys/fs/cgroup"), "0::/../ctr\n", cgroup2Line("/../ctr", "/sys/fs/cgroup"))
	want := filepath.Join(proc, "42", "root", "sys", "fs", "cgroup")
	write(t, filepath.Join(want, "cpu.pressure"), "some avg10=0.00 avg60=0.00 avg300=0.00 total=385\n")
	got, err := Host{Proc: proc}.ProcessDir(42)
	if err != nil || got != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

// A hybrid host's containers get no cgroup2 mount from runc (seen here with podman and runc
// 1.1): nothing shows the cgroup, and the error says where it looked.
func TestProcessDirNowhere(t *testing.T) {
	t.Parallel()
	proc := fakeProc(t, tmpfsLine, "0::/libpod_parent/ctr\n", tmpfsLine)
	_, err := Host{Proc: proc}.ProcessDir(42)
	if !errors.Is(err, ErrNotMounted) || !strings.Contains(err.Error(), "/libpod_parent/ctr") {
		t.Errorf("got %v", err)
	}
	if _, err := (Host{Proc: proc}).ProcessDir(43); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a process that is not there: %v", err)
	}
}

// The real thing: this test process's own cgroup lists it.
func TestProcessDirSelf(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/cgroup"); err != nil {
		skipOrFail(t, "no procfs: %v", err)
	}
	dir, err := Host{}.ProcessDir(os.Getpid())
	if errors.Is(err, ErrNoUnified) || errors.Is(err, ErrNotMounted) {
		skipOrFail(t, "no cgroup v2 here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	if !containsLine(string(procs), strconv.Itoa(os.Getpid())) {
		t.Errorf("%s/cgroup.procs does not list us (%d): %q", dir, os.Getpid(), procs)
	}
}

func containsLine(s, line string) bool {
	for l := range strings.Lines(s) {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}
