package lifecycle

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
)

// newFakeEnv is an env on the in-memory resctrl with rmids RMIDs for monitoring groups and
// no counters, snapshots off (decisions that do not look at them): no root, no FUSE. A test
// that runs on the simulator too builds its env with onBoth's newEnv instead.
func newFakeEnv(t *testing.T, rmids int, edit func(*config.Config)) (*env, *resctrlfake.Resctrl) {
	t.Helper()
	fake := resctrlfake.New(rmids)
	cfg := config.Default()
	cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir, cfg.Log = "/nonexistent-resctrl", filepath.Join(t.TempDir(), "state"), "", "stderr"
	if edit != nil {
		edit(&cfg)
	}
	return fakeEnv(t, fake, fake, cfg), fake
}

func uid(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

func fakeCrio(pod string) map[string]string { return crio(pod, strings.Repeat("c", 64)) }
