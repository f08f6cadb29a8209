package install_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestHostInstallPodman is the Helm chart's hooks mode on one host: `resctrl-mon host
// install` runs where the host's directories are seen under a prefix (each bind-mounted at
// <host root><dir>, as the chart's hostPath volumes are at /host<dir>), and real podman,
// reading the host's hooks dir, runs the installed hook at its host path with the installed
// config: every task of a forking pod member is placed. Uninstall then leaves only the
// admin's files.
func TestHostInstallPodman(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 0s\nfailurePolicy: closed\n")
	host := t.TempDir()
	libexec, hooksDir, etc := filepath.Join(host, "libexec"), filepath.Join(host, "hooks.d"), filepath.Join(host, "etc")
	hostRoot := t.TempDir()
	for _, d := range []string{libexec, hooksDir, etc} {
		seen := filepath.Join(hostRoot, d)
		for _, m := range []string{d, seen} {
			if err := os.MkdirAll(m, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := unix.Mount(d, seen, "", unix.MS_BIND, ""); err != nil {
			t.Fatalf("bind %s at %s: %v", d, seen, err)
		}
		t.Cleanup(func() { _ = unix.Unmount(seen, unix.MNT_DETACH) })
	}
	// The admin's files beside ours (podman reads only *.json in a hooks dir).
	foreign := []string{filepath.Join(hooksDir, "README"), filepath.Join(etc, "web.yml")}
	for _, f := range foreign {
		if err := os.WriteFile(f, []byte("the admin's"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	hookPath, cfgPath := filepath.Join(libexec, "resctrl-mon-hook"), filepath.Join(etc, "config.yaml")
	where := []string{"--host-root", hostRoot, "--hook-path", hookPath, "--hooks-dir", hooksDir, "--config-path", cfgPath}
	install := append([]string{"host", "install", "--hook-source", e2e.Binaries.Hook, "--config", e.CfgPath, "--timeout", "10"}, where...)
	for range 2 { // the second is the chart's pod restarting: the same files again
		if out, err := exec.Command(e2e.Binaries.CLI, install...).CombinedOutput(); err != nil {
			t.Fatalf("resctrl-mon %s: %v\n%s", strings.Join(install, " "), err, out)
		}
	}
	for _, stage := range stages {
		r := readRegistration(t, hooksDir, stage, hookPath)
		checkBudget(t, r)
		if i := slices.Index(r.Hook.Args, "--config"); i < 0 || r.Hook.Args[i+1] != cfgPath {
			t.Errorf("%s: args %q, want --config %s (the host path)", stage, r.Hook.Args, cfgPath)
		}
	}

	p := e2e.Podman(t)
	pod, err := p.CreatePod(e2e.PodOptions{Name: "e2e-host-install"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := p.Run(e2e.PodmanRunOptions{HooksDir: hooksDir, Pod: pod.Name, Name: pod.Name + "-m", Rootfs: e.Rootfs, Args: []string{"forker"}, Detach: true})
	if err != nil {
		t.Fatalf("the member did not start (failurePolicy closed): %v\n%s", err, e.Log())
	}
	e2e.WaitPodmanReady(t, p, id)
	pid, err := p.PID(id)
	if err != nil {
		t.Fatal(err)
	}
	tids, err := e2e.CgroupTasks(pid)
	if err != nil {
		t.Fatal(err)
	}
	group := "mon_groups/" + pod.InfraID
	placed := e.PlacedOf(group, tids)
	t.Logf("placed %d of %d tasks in %s by the hook host install put at %s", placed, len(tids), group, hookPath)
	if placed != len(tids) || len(tids) < 12 {
		t.Errorf("placed %d of %d tasks in the pod's group\n%s", placed, len(tids), e.Log())
	}
	e.EndPodmanPod(t, p, pod.ID, group)

	uninstall := append([]string{"host", "uninstall"}, where...)
	if out, err := exec.Command(e2e.Binaries.CLI, uninstall...).CombinedOutput(); err != nil {
		t.Fatalf("resctrl-mon %s: %v\n%s", strings.Join(uninstall, " "), err, out)
	}
	if left := filesUnder(t, host); !slices.Equal(left, []string{"/etc/web.yml", "/hooks.d/README"}) {
		t.Errorf("after uninstall: %q, want only the admin's files", left)
	}
}
