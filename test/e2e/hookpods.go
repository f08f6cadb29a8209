package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/hooksd"
	"github.com/resctrl-mon/resctrl-mon/lib/hostinstall"
	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

// PodUIDA, PodUIDB and PodUIDC are the pod UIDs the tests place.
const (
	PodUIDA = "6a1f3c2e-0000-4000-8000-00000000000a"
	PodUIDB = "6a1f3c2e-0000-4000-8000-00000000000b"
	PodUIDC = "6a1f3c2e-0000-4000-8000-00000000000c"
)

// WaitPodmanReady waits until the forker in podman container id printed "ready".
func WaitPodmanReady(t *testing.T, p *PodmanRunner, id string) {
	t.Helper()
	err := poll.Until(20*time.Second, func() error {
		out, err := p.Command("logs", id)
		if err != nil {
			return err
		}
		if !strings.Contains(string(out), "ready") {
			return fmt.Errorf("forker in %.12s not ready: %q", id, out)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// InstallHookJSON writes the hooks.d JSON named name as `make install` and `resctrl-mon
// host install` do (lib/hooksd, with the default timeout), pointing at the test's hook
// binary and passing it the test's config with --config.
func InstallHookJSON(t *testing.T, name, dir, cfgPath string) {
	t.Helper()
	files, err := hooksd.Files(hooksd.Options{HookPath: Binaries.Hook, ConfigPath: cfgPath, Timeout: hostinstall.DefaultTimeout})
	if err != nil {
		t.Fatal(err)
	}
	b, ok := files[name]
	if !ok {
		t.Fatalf("no hooks.d file %s", name)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// LifeSnapshots lists group's snapshot files, by life.
func LifeSnapshots(t *testing.T, dir, group string) []snapshot.Name {
	t.Helper()
	all, err := snapshot.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(all, func(n snapshot.Name) bool { return n.Group != group })
}
