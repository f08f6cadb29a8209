package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/hostinstall"
)

// hostRun runs `resctrl-mon host ARGS...` and returns what it printed and its error.
func hostRun(args ...string) (string, error) {
	var out bytes.Buffer
	app := &cli.App{Name: "resctrl-mon", Writer: &out, ErrWriter: &out, Commands: []*cli.Command{hostCommand()}}
	err := app.Run(append([]string{"resctrl-mon", "host"}, args...))
	return out.String(), err
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A host with the hook and the wrapper installed, an empty /proc, and the uninstall's flags.
func installedHost(t *testing.T) (root, proc string, args []string) {
	t.Helper()
	root, src, proc := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(src, "hook"), "\x7fELF hook")
	writeFile(t, filepath.Join(src, "wrapper"), "\x7fELF wrapper")
	if _, err := hostinstall.Install(hostinstall.Options{
		HostRoot: root, HookSource: filepath.Join(src, "hook"), HookPath: hostinstall.DefaultHookPath,
		HooksDir: hostinstall.DefaultHooksDir, ConfigPath: hostinstall.DefaultConfigPath, Timeout: hostinstall.DefaultTimeout,
		WrapperPath: "/usr/local/bin/resctrl-mon-runtime", WrapperSource: filepath.Join(src, "wrapper"), NoRegistrations: true,
	}); err != nil {
		t.Fatal(err)
	}
	return root, proc, []string{"uninstall", "--host-root=" + root, "--proc=" + proc, "--wait-placers=1ms"}
}

// The decisions, each on stdout: a runtime naming the wrapper keeps everything and fails
// (the hook's Job reports it); a placer still running keeps everything; then it all goes.
func TestHostUninstallDecisions(t *testing.T) {
	t.Parallel()
	root, proc, args := installedHost(t)
	wrapper := filepath.Join(root, "usr/local/bin/resctrl-mon-runtime")
	conf := filepath.Join(root, "etc/containerd/config.toml")
	writeFile(t, conf, "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.rm.options]\nBinaryName = \"/usr/local/bin/resctrl-mon-runtime\"\n")

	out, err := hostRun(args...)
	if err == nil || !strings.Contains(out, "ResctrlMonKept: kept everything on this node: /etc/containerd/config.toml line 2 names /usr/local/bin/resctrl-mon-runtime") {
		t.Errorf("named by containerd: %v\n%s", err, out)
	}
	if _, err := os.Stat(wrapper); err != nil {
		t.Errorf("the wrapper went: %v", err)
	}

	writeFile(t, conf, "version = 3\n")
	writeFile(t, filepath.Join(proc, "4242", "cmdline"), "/usr/local/bin/resctrl-mon-nri\x00--nri-idx=10\x00")
	out, err = hostRun(args...)
	if err == nil || !strings.Contains(out, "ResctrlMonKept: kept everything on this node: still running after 1ms: resctrl-mon-nri (pid 4242)") {
		t.Errorf("adapter still running: %v\n%s", err, out)
	}
	if _, err := os.Stat(wrapper); err != nil {
		t.Errorf("the wrapper went: %v", err)
	}

	if err := os.RemoveAll(filepath.Join(proc, "4242")); err != nil {
		t.Fatal(err)
	}
	out, err = hostRun(args...)
	if err != nil || !strings.Contains(out, "removed /usr/local/bin/resctrl-mon-runtime") || !strings.Contains(out, "ResctrlMonUninstall: removed 3 files") {
		t.Errorf("uninstall: %v\n%s", err, out)
	}
	if _, err := os.Stat(wrapper); err == nil {
		t.Error("the wrapper is still there")
	}
	// An empty --runtime-config checks none; --no-files touches no file.
	root2, _, args2 := installedHost(t)
	writeFile(t, filepath.Join(root2, "etc/crio/crio.conf"), "runtime_path = \"/usr/local/bin/resctrl-mon-runtime\"\n")
	if out, err := hostRun(append(args2, "--no-files")...); err != nil || strings.Contains(out, "removed /") || !strings.Contains(out, "ResctrlMonUninstall: released 0 groups") {
		t.Errorf("--no-files: %v\n%s", err, out)
	}
	if out, err := hostRun(append(args2, "--runtime-config=")...); err != nil || !strings.Contains(out, "ResctrlMonUninstall") {
		t.Errorf("no runtime config checked: %v\n%s", err, out)
	}
}
