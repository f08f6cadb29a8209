package sidecar_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

// TestSidecarPrivileges measures which privileges the sidecar needs inside the pod, as the
// seed ran it: a container of the pod, sharing its process namespace, finding its target
// by the flag file read through /proc/<pid>/root. The kernel lets a process open another's
// root with ptrace read access: same uid (and gid) and a permitted capability set that is
// a superset of the target's, or CAP_SYS_PTRACE. Each case is a sidecar container started
// as given and asked for /healthz once its target runs; ready means it found the target.
//
// This is a hybrid cgroup machine, where runc mounts no cgroup2 into containers, so each
// sidecar is given the host's cgroup2 mount (read-only) to read pressure from; the flag
// search, which is what is measured, does not use it.
func TestSidecarPrivileges(t *testing.T) {
	t.Parallel()
	e2e.BuildBinaries(t)
	pm := e2e.Podman(t)
	rootfs := e2e.Rootfs(t, map[string]string{"resctrl-mon": e2e.Binaries.CLI})
	unified, err := cgroup2Mount()
	if err != nil {
		e2e.Unavailable(t, "no cgroup2 mount to give the sidecars: %v", err)
	}
	pod := sharedPod(t, pm)
	// Flag directories every user can read (a ConfigMap volume is world-readable too).
	base := t.TempDir()
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	flagDir := func(flag string) string {
		dir := filepath.Join(base, flag)
		writeTestFile(t, filepath.Join(dir, "pid_flag"), flag+"\n")
		return dir
	}
	// Targets: root with the runtime's default capabilities, root with one more, uid 1000.
	targets := map[string][]string{
		"root":           nil,
		"root-sys-admin": {"--cap-add", "SYS_ADMIN"},
		"uid-1000":       {"--user", "1000:1000"},
	}
	for flag, flags := range targets {
		_, err := pm.Run(e2e.PodmanRunOptions{Name: "target-" + flag, Rootfs: rootfs, Detach: true, Args: []string{"sleep", "1000"},
			Pod: pod.Name, Flags: append([]string{"--volume", flagDir(flag) + ":/run/pid_flag:ro"}, flags...)})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, tc := range []struct {
		name   string
		target string
		flags  []string
		ready  bool
	}{
		{"root, default capabilities -> root", "root", nil, true},
		{"root, default capabilities -> root with SYS_ADMIN", "root-sys-admin", nil, false},
		{"root, default capabilities -> uid 1000", "uid-1000", nil, false},
		{"root, no capabilities -> root", "root", []string{"--cap-drop", "ALL"}, false},
		{"root, only SYS_PTRACE -> root", "root", []string{"--cap-drop", "ALL", "--cap-add", "SYS_PTRACE"}, true},
		{"root, only SYS_PTRACE -> root with SYS_ADMIN", "root-sys-admin", []string{"--cap-drop", "ALL", "--cap-add", "SYS_PTRACE"}, true},
		{"root, only SYS_PTRACE -> uid 1000", "uid-1000", []string{"--cap-drop", "ALL", "--cap-add", "SYS_PTRACE"}, true},
		{"uid 1000 -> uid 1000", "uid-1000", []string{"--user", "1000:1000"}, true},
		{"uid 1000 -> root", "root", []string{"--user", "1000:1000"}, false},
		{"uid 1001 -> uid 1000", "uid-1000", []string{"--user", "1001:1001"}, false},
	} {
		// The pod's members share one network namespace: a port for each sidecar.
		port := fmt.Sprint(8800 + i)
		name := e2e.RandomName("sc-")
		_, err := pm.Run(e2e.PodmanRunOptions{Name: name, Rootfs: rootfs, Detach: true,
			// Its log to stdout, which `podman logs` gives back on its own stdout.
			Args: []string{"sh", "-c", "exec resctrl-mon sidecar --address 127.0.0.1 --flag-path /run/pid_flag/pid_flag --flag-file /run/sc/pid_flag 2>&1"},
			Pod:  pod.Name, Flags: append([]string{"--env", "PORT=" + port, "--volume", flagDir(tc.target) + ":/run/sc:ro",
				"--volume", unified + ":/sys/fs/cgroup/unified:ro"}, tc.flags...)})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var out []byte
		var ready bool
		err = poll.Until(30*time.Second, func() error {
			out, err = pm.Command("exec", name, "wget", "-q", "-O", "-", "http://127.0.0.1:"+port+"/healthz")
			switch {
			case err == nil:
				ready = true
				return nil
			case strings.Contains(err.Error(), "503"):
				return nil
			}
			return err // not listening yet
		})
		logs, lerr := pm.Command("logs", name)
		if err := errors.Join(err, lerr); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, logs)
		}
		reason := lastLine(string(logs))
		t.Logf("%s: ready %v: %s", tc.name, ready, reason)
		if ready != tc.ready {
			t.Errorf("%s: ready %v, want %v; /healthz %q; log:\n%s", tc.name, ready, tc.ready, out, logs)
		}
		if !ready && !strings.Contains(reason, "permission denied") {
			t.Errorf("%s: the reason does not say permission denied: %s", tc.name, reason)
		}
		if err := pm.Remove(name); err != nil {
			t.Error(err)
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// cgroup2Mount is where this process sees the cgroup v2 hierarchy's root.
func cgroup2Mount() (string, error) {
	for _, p := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		if _, err := os.Stat(filepath.Join(p, "cgroup.controllers")); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no cgroup.controllers under /sys/fs/cgroup or /sys/fs/cgroup/unified")
}
