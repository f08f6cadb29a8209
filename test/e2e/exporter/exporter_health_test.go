package exporter_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// serve run as a user that cannot read the state dir (root's, 0700) says so: /healthz answers
// 503 naming the state dir, and the log has a line saying why, instead of 200 "ok" beside
// inventory_up 0.
func TestServeHealthzStateDirUnreadable(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux)")
	}
	e2e.BuildBinaries(t)
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	// Everything on the way is open to others but the state dir itself.
	dir, err := os.MkdirTemp("", "resctrl-mon-e2e-health-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	stateDir := filepath.Join(dir, "state")
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{{dir, 0o755}, {stateDir, 0o700}} {
		if err := os.MkdirAll(d.path, d.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d.path, d.mode); err != nil {
			t.Fatal(err)
		}
	}
	cli := filepath.Join(dir, "resctrl-mon")
	b, err := os.ReadFile(e2e.Binaries.CLI)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	for path, content := range map[string]struct {
		b    []byte
		mode os.FileMode
	}{cli: {b, 0o755}, cfgPath: {fmt.Appendf(nil, "resctrlRoot: %s\nresctrlSimulator: true\nstateDir: %s\nsnapshotDir: %s\nlog: stderr\n", sim.Dir, stateDir, filepath.Join(dir, "snap")), 0o644}} {
		if err := os.WriteFile(path, content.b, content.mode); err != nil {
			t.Fatal(err)
		}
	}
	s := e2e.RunServe(t, exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
		cli, "--config", cfgPath, "serve", "--listen", "127.0.0.1:0"))
	resp, err := http.Get("http://" + s.Addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), stateDir) {
		t.Errorf("/healthz with an unreadable state dir: %d %q, want 503 naming %s", resp.StatusCode, body, stateDir)
	}
	s.Stop(t)
	if !strings.Contains(s.Log(), "state dir") {
		t.Errorf("serve's log says nothing of the state dir:\n%s", s.Log())
	}
}
