package hook_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/hooks/hook"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// Bad input is logged with a clear error; the exit code is the failure policy's; nothing is
// created.
func TestBadInputFollowsThePolicy(t *testing.T) {
	t.Parallel()
	sim := resctrlsim.MountT(t, resctrlsim.Options{})
	for _, policy := range []config.FailurePolicy{config.FailOpen, config.FailClosed} {
		dir := t.TempDir()
		cfg := config.Default()
		cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir = sim.Dir, filepath.Join(dir, "state"), ""
		cfg.ResctrlSimulator = true
		cfg.Log, cfg.FailurePolicy = "file:"+filepath.Join(dir, "hook.log"), policy
		want := 0
		if policy == config.FailClosed {
			want = 1
		}
		for name, in := range map[string]string{
			"empty":     "",
			"truncated": `{"id":"c1","pid":`,
			"garbage":   strings.Repeat("garbage", 10<<20/7),
			"pid 0":     `{"id":"c1","pid":0}`,
			"no pid":    `{"id":"c1"}`,
			"missing":   `{"id":"c1","pid":1073741824}`,
		} {
			var stderr bytes.Buffer
			if code := hook.Run(time.Now(), nil, hook.CreateRuntime, strings.NewReader(in), &stderr, cfg, nil, kernel.Open); code != want {
				t.Errorf("%s, %s: exit %d, want %d", policy, name, code, want)
			}
			if policy == config.FailClosed && !strings.Contains(stderr.String(), "not started") {
				t.Errorf("%s, %s: stderr %q does not say why", policy, name, stderr.String())
			}
			// Poststop never fails.
			if code := hook.Run(time.Now(), nil, hook.Poststop, strings.NewReader(in), &stderr, cfg, nil, kernel.Open); code != 0 {
				t.Errorf("poststop %s: exit %d", name, code)
			}
		}
		log, err := os.ReadFile(filepath.Join(dir, "hook.log"))
		if err != nil || !strings.Contains(string(log), "bad container state") || !strings.Contains(string(log), "level=ERROR") {
			t.Errorf("%s: the log does not explain: %s", policy, log)
		}
	}
	if es, _ := os.ReadDir(filepath.Join(sim.Dir, "mon_groups")); len(es) != 0 {
		t.Errorf("bad input made groups: %v", es)
	}
}
