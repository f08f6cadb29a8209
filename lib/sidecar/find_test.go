package sidecar

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// flagIn puts a flag file in the fake root of pid.
func flagIn(t *testing.T, proc, pid, content string) string {
	t.Helper()
	p := filepath.Join(proc, pid, "root", "etc", "pid_flag", "pid_flag")
	writeFile(t, p, content)
	return p
}

func TestByFlag(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	if err := os.Symlink("7", filepath.Join(proc, "self")); err != nil {
		t.Fatal(err)
	}
	flagIn(t, proc, "7", "stress-ng-1\n") // ourselves: never the container
	flagIn(t, proc, "12", "other\n")
	flagIn(t, proc, "30", "stress-ng-1\n")
	flagIn(t, proc, "200", " stress-ng-1 \n") // cgroup_monitor_sc compares trimmed contents
	writeFile(t, filepath.Join(proc, "9", "stat"), "")
	if err := os.MkdirAll(filepath.Join(proc, "sys"), 0o755); err != nil {
		t.Fatal(err)
	}
	pid, err := byFlag(proc, DefaultFlagPath, "stress-ng-1")()
	if err != nil || pid != 30 {
		t.Errorf("got %d, %v; want 30, the lowest pid that matches", pid, err)
	}
	if _, err := byFlag(proc, DefaultFlagPath, "nobody")(); !errors.Is(err, ErrNotFound) {
		t.Errorf("no match: %v", err)
	}
}

// The flag is read as the container would read it: an absolute symlink resolves inside the
// container's root, so a container cannot point its flag at the sidecar's own copy (or
// any other file of the sidecar's) and be taken for the container being looked for.
func TestByFlagSymlinkStaysInTheRoot(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	ours := filepath.Join(t.TempDir(), "pid_flag_sc")
	writeFile(t, ours, "secret\n")
	link := filepath.Join(proc, "5", "root", "etc", "pid_flag", "pid_flag")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ours, link); err != nil {
		t.Fatal(err)
	}
	if pid, err := byFlag(proc, DefaultFlagPath, "secret")(); !errors.Is(err, ErrNotFound) {
		t.Errorf("a symlink out of the root matched: pid %d, %v", pid, err)
	}
	// Inside the root, the same link leads to the container's own file.
	writeFile(t, filepath.Join(proc, "5", "root", ours), "secret\n")
	if pid, err := byFlag(proc, DefaultFlagPath, "secret")(); err != nil || pid != 5 {
		t.Errorf("a symlink inside the root: %d, %v", pid, err)
	}
}

// A FIFO at the flag path would block a plain open forever.
func TestByFlagFIFO(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	fifo := filepath.Join(proc, "5", "root", "etc", "pid_flag", "pid_flag")
	if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	flagIn(t, proc, "6", "x")
	done := make(chan error, 1)
	var pid int
	go func() {
		var err error
		pid, err = byFlag(proc, DefaultFlagPath, "x")()
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil || pid != 6 {
			t.Errorf("got %d, %v", pid, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the search hangs on a FIFO")
	}
}

func TestKubeletMountRoot(t *testing.T) {
	t.Parallel()
	for root, want := range map[string]string{
		"/var/lib/kubelet/pods/0d3f-uid/containers/app/5c1e2d3f":  "0d3f-uid",
		"/pods/0d3f-uid/containers/app/5c1e2d3f":                  "0d3f-uid", // /var/lib/kubelet on its own filesystem
		"/var/lib/kubelet/pods/0d3f-uid/containers/app2/5c1e2d3f": "",
		"/var/lib/kubelet/pods/0d3f-uid/etc-hosts":                "",
		"/var/lib/kubelet/pods/0d3f-uid/containers/app":           "",
		"/containers/app/5c1e2d3f":                                "",
		"/":                                                       "",
	} {
		got, ok := kubeletMountRoot(root, "app")
		if got != want || ok != (want != "") {
			t.Errorf("%s: %q, %v; want %q", root, got, ok, want)
		}
	}
}

// FuzzKubeletMountRoot: a mount root from another process's mountinfo names a pod only as
// .../pods/<uid>/containers/<name>/<id>, and every such root names it, whatever comes before.
func FuzzKubeletMountRoot(f *testing.F) {
	f.Add("/var/lib/kubelet/pods/0d3f-uid/containers/app/5c1e2d3f", "app", "/x", "u", "1")
	f.Add("/pods//containers/app/5c1e2d3f", "app", "", "u", "1")
	f.Add("/pods/u/containers/a/b/c", "a/b", "/pods/u/containers", "u", "c")
	f.Fuzz(func(t *testing.T, root, name, prefix, uid, id string) {
		if got, ok := kubeletMountRoot(root, name); ok {
			last := root[strings.LastIndexByte(root, '/')+1:]
			if got == "" || strings.Contains(got, "/") || last == "" ||
				!strings.HasSuffix(root, "pods/"+got+"/containers/"+name+"/"+last) {
				t.Errorf("%q, %q: pod %q", root, name, got)
			}
		} else if got != "" {
			t.Errorf("%q, %q: pod %q without ok", root, name, got)
		}
		if uid == "" || id == "" || name == "" || strings.ContainsAny(uid+id+name, "/") {
			return
		}
		built := prefix + "/pods/" + uid + "/containers/" + name + "/" + id
		if got, ok := kubeletMountRoot(built, name); !ok || got != uid {
			t.Errorf("%q, %q: %q, %v; want %q", built, name, got, ok, uid)
		}
	})
}

func mountinfoOf(t *testing.T, proc, pid string, roots ...string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("1 0 252:0 / / rw - ext4 /dev/vda rw\n")
	for i, r := range roots {
		b.WriteString(strings.Join([]string{"2" + string(rune('0'+i)), "1", "252:0", r, "/dev/termination-log", "rw - ext4 /dev/vda rw\n"}, " "))
	}
	writeFile(t, filepath.Join(proc, pid, "mountinfo"), b.String())
}

func TestByName(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	mountinfoOf(t, proc, "1") // the pause process
	mountinfoOf(t, proc, "8", "/var/lib/kubelet/pods/uid-1/containers/sidecar/aa11")
	mountinfoOf(t, proc, "15", "/var/lib/kubelet/pods/uid-1/containers/app/bb22")
	mountinfoOf(t, proc, "16", "/var/lib/kubelet/pods/uid-1/containers/app/bb22")
	if pid, err := byName(proc, "app")(); err != nil || pid != 15 {
		t.Errorf("app: %d, %v", pid, err)
	}
	if _, err := byName(proc, "db")(); !errors.Is(err, ErrNotFound) {
		t.Errorf("db: %v", err)
	}
	// Seen from the node, the name may be in several pods.
	mountinfoOf(t, proc, "40", "/var/lib/kubelet/pods/uid-2/containers/app/cc33")
	if _, err := byName(proc, "app")(); err == nil || !strings.Contains(err.Error(), "2 pods (uid-1, uid-2)") {
		t.Errorf("two pods: %v", err)
	}
}

func TestByPID(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	writeFile(t, filepath.Join(proc, "42", "stat"), "")
	if pid, err := byPID(proc, 42)(); err != nil || pid != 42 {
		t.Errorf("42: %d, %v", pid, err)
	}
	if _, err := byPID(proc, 43)(); !errors.Is(err, ErrNotFound) {
		t.Errorf("43: %v", err)
	}
}
