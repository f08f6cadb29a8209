package e2e_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
)

// TestInstall runs `make install` into a scratch prefix and checks what a runtime and systemd
// will load: the hook first, then one hooks.d JSON per stage pointing at it with a timeout
// and an environment, units that systemd accepts, and a config with every default. A second
// install keeps the admin's config; uninstall removes everything else.
func TestInstall(t *testing.T) {
	// Not parallel: make writes bin/, which the other make-driven test runs.
	p := t.TempDir()
	vars := []string{"PREFIX=" + p, "UNITDIR=" + p + "/units", "HOOKSDIR=" + p + "/hooks.d", "CONFDIR=" + p + "/etc"}
	make := func(target string) {
		t.Helper()
		cmd := exec.Command("make", append([]string{"-C", "../..", target}, vars...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make %s: %v\n%s", target, err, out)
		}
	}
	make("install")
	hook := filepath.Join(p, "libexec/oci/hooks.d/resctrl-mon-hook")
	for _, f := range []string{hook, filepath.Join(p, "bin/resctrl-mon")} {
		if fi, err := os.Stat(f); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, stage := range []string{"createRuntime", "poststop"} {
		b, err := os.ReadFile(filepath.Join(p, "hooks.d", "resctrl-mon-"+strings.ToLower(stage)+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Version string     `json:"version"`
			Hook    specs.Hook `json:"hook"`
			When    struct {
				Always *bool `json:"always"`
			} `json:"when"`
			Stages []string `json:"stages"`
		}
		if err := json.Unmarshal(b, &h); err != nil {
			t.Fatalf("%s JSON: %v", stage, err)
		}
		if h.Version != "1.0.0" || h.Hook.Path != hook || h.Hook.Timeout == nil || len(h.Hook.Env) == 0 ||
			h.When.Always == nil || !*h.When.Always || !slices.Equal(h.Stages, []string{stage}) || h.Hook.Args[len(h.Hook.Args)-1] != stage {
			t.Errorf("%s registration: %+v", stage, h)
		}
	}
	if path, err := exec.LookPath("systemd-analyze"); err == nil {
		units := []string{filepath.Join(p, "units/resctrl-mon-reconcile.service"), filepath.Join(p, "units/resctrl-mon-reconcile.timer")}
		if out, err := exec.Command(path, append([]string{"verify"}, units...)...).CombinedOutput(); err != nil {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
		if b, _ := os.ReadFile(units[0]); !strings.Contains(string(b), "ExecStart="+p+"/bin/resctrl-mon reconcile") {
			t.Errorf("the service does not run the installed reconcile:\n%s", b)
		}
	} else if os.Getenv("RESCTRLSIM_REQUIRE") == "1" {
		t.Errorf("systemd-analyze is missing: %v", err)
	}
	cfgPath := filepath.Join(p, "etc/config.yaml")
	f, err := os.Open(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Parse(f); err != nil {
		t.Errorf("installed config: %v", err)
	}
	_ = f.Close()
	if err := os.WriteFile(cfgPath, []byte("retention: 1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	make("install")
	if b, _ := os.ReadFile(cfgPath); string(b) != "retention: 1m\n" {
		t.Errorf("a second install replaced the admin's config")
	}
	make("uninstall")
	var left []string
	_ = filepath.Walk(p, func(path string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			left = append(left, strings.TrimPrefix(path, p))
		}
		return nil
	})
	if !slices.Equal(left, []string{"/etc/config.yaml"}) {
		t.Errorf("after uninstall: %v, want only the config", left)
	}
}
