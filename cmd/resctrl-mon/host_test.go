package main

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/hostinstall"
)

// cliGlobals serialises the runs: urfave/cli writes into its own package-level help flag and
// help command at every run, whatever the app.
var cliGlobals sync.Mutex

// hostRun runs `resctrl-mon host ARGS...` and returns what it printed and its error.
func hostRun(args ...string) (string, error) {
	cliGlobals.Lock()
	defer cliGlobals.Unlock()
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
	// The node's runc, which install checks the wrapper can run.
	writeFile(t, filepath.Join(root, "usr/sbin/runc"), "\x7fELF runc")
	if err := os.Chmod(filepath.Join(root, "usr/sbin/runc"), 0o755); err != nil {
		t.Fatal(err)
	}
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

// apiServer is a TLS API server that records each Event posted (answering status), and the
// service account directory that trusts it.
func apiServer(t *testing.T, status int) (url, saDir string, events *[]map[string]any) {
	t.Helper()
	var mu sync.Mutex
	var got []map[string]any
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e map[string]any
		if r.Method == http.MethodPost && r.URL.Path == "/api/v1/namespaces/default/events" && json.NewDecoder(r.Body).Decode(&e) == nil {
			mu.Lock()
			got = append(got, e)
			mu.Unlock()
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	saDir = t.TempDir()
	writeFile(t, filepath.Join(saDir, "ca.crt"), string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
	writeFile(t, filepath.Join(saDir, "token"), "tok")
	return srv.URL, saDir, &got
}

// Every decision is an Event on the Node; one the API server refuses is said, and the
// decision stands.
func TestHostUninstallEvents(t *testing.T) {
	t.Parallel()
	root, _, args := installedHost(t)
	url, sa, events := apiServer(t, http.StatusCreated)
	ev := append(slices.Clone(args), "--event-node=node-1", "--api-server="+url, "--service-account-dir="+sa)
	conf := filepath.Join(root, "etc/crio/crio.conf.d/10-rm.conf")
	writeFile(t, conf, "[crio.runtime.runtimes.rm]\nruntime_path = \"/usr/local/bin/resctrl-mon-runtime\"\n")
	if _, err := hostRun(ev...); err == nil {
		t.Fatal("named by CRI-O: no error")
	}
	writeFile(t, conf, "")
	if out, err := hostRun(ev...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(*events) != 2 {
		t.Fatalf("events %v, want a refusal and an uninstall", *events)
	}
	for i, want := range []struct{ reason, typ, msg string }{
		{"ResctrlMonKept", "Warning", "/etc/crio/crio.conf.d/10-rm.conf line 2 names /usr/local/bin/resctrl-mon-runtime"},
		{"ResctrlMonUninstall", "Normal", "removed 3 files"},
	} {
		e := (*events)[i]
		obj, _ := e["involvedObject"].(map[string]any)
		if e["reason"] != want.reason || e["type"] != want.typ || !strings.Contains(fmt.Sprint(e["message"]), want.msg) || obj["kind"] != "Node" || obj["name"] != "node-1" {
			t.Errorf("event %d = %v, want %+v", i, e, want)
		}
	}

	root2, _, args2 := installedHost(t)
	url, sa, _ = apiServer(t, http.StatusForbidden)
	out, err := hostRun(append(args2, "--event-node=node-1", "--api-server="+url, "--service-account-dir="+sa)...)
	if err != nil || !strings.Contains(out, "was not posted (the decision stands)") || !strings.Contains(out, "403") {
		t.Errorf("refused event: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(root2, "usr/local/bin/resctrl-mon-runtime")); err == nil {
		t.Error("a refused Event stopped the uninstall")
	}
}
