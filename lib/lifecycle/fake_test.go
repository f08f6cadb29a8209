package lifecycle

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
)

// newFakeEnv is newEnv on the in-memory resctrl: no root, no FUSE.
func newFakeEnv(t *testing.T, rmids int, edit func(*config.Config)) (*env, *resctrlfake.Resctrl) {
	t.Helper()
	fake := resctrlfake.New(rmids)
	cfg := config.Default()
	cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir, cfg.Log = "/nonexistent-resctrl", filepath.Join(t.TempDir(), "state"), "", "stderr"
	if edit != nil {
		edit(&cfg)
	}
	m, err := NewWith(cfg, slog.New(slog.DiscardHandler), fake)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, cfg: cfg, m: m, now: time.Now()}
	m.SetClock(func() time.Time { return e.now })
	return e, fake
}

func uid(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

func fakeCrio(pod string) map[string]string { return crio(pod, strings.Repeat("c", 64)) }
