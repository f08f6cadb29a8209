package nri_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
)

// TestNRISnippets: the runtime config snippets `make install` puts in DOCDIR/examples are
// read by the real runtimes as NRI's settings: each runtime's own `config` dump, given the
// snippet with the socket path changed to one of the test's, shows that path (so the table
// and key names are the ones the runtime reads), with NRI on.
func TestNRISnippets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sock := filepath.Join(dir, "snippet-nri.sock")
	snippet := func(name string) string {
		b, err := os.ReadFile(filepath.Join("../../../install/nri", name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"/var/run/nri/nri.sock"`) {
			t.Fatalf("%s does not name NRI's default socket, which the adapter dials by default:\n%s", name, b)
		}
		return strings.ReplaceAll(string(b), "/var/run/nri/nri.sock", sock)
	}

	t.Run("containerd", func(t *testing.T) {
		t.Parallel()
		conf := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(conf, []byte("version = 3\n"+snippet("containerd-nri.toml")), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(filepath.Join(e2e.RuntimeBins(t, "containerd"), "containerd"), "--config", conf, "config", "dump").CombinedOutput()
		if err != nil {
			t.Fatalf("containerd config dump: %v\n%s", err, out)
		}
		_, nri, _ := strings.Cut(string(out), "[plugins.'io.containerd.nri.v1.nri']\n")
		nri, _, _ = strings.Cut(nri, "\n\n")
		if !strings.Contains(nri, "socket_path = '"+sock+"'") || !strings.Contains(nri, "disable = false") ||
			!strings.Contains(nri, "disable_connections = false") {
			t.Errorf("containerd does not read the snippet as NRI on, external plugins allowed, on its socket:\n%s", nri)
		}
	})

	t.Run("CRI-O", func(t *testing.T) {
		t.Parallel()
		confDir := filepath.Join(dir, "crio.conf.d")
		if err := os.MkdirAll(confDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(confDir, "10-nri.conf"), []byte(snippet("crio-nri.conf")), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(filepath.Join(e2e.RuntimeBins(t, "crio"), "crio"), "--config", "", "--config-dir", confDir, "config").CombinedOutput()
		if err != nil {
			t.Fatalf("crio config: %v\n%s", err, out)
		}
		_, nri, _ := strings.Cut(string(out), "[crio.nri]\n")
		nri, _, _ = strings.Cut(nri, "\n[")
		// CRI-O prints a setting at its default commented out: NRI is on by default in 1.34.
		if !strings.Contains(nri, `nri_listen = "`+sock+`"`) || !strings.Contains(nri, "enable_nri = true") {
			t.Errorf("CRI-O does not read the snippet as NRI on, on its socket:\n%s", nri)
		}
	})
}
