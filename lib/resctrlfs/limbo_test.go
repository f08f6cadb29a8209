package resctrlfs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// limboRoot is a resctrl root with info/L3_MON's mon_features and max_threshold_occupancy
// ("" leaves a file out).
func limboRoot(t testing.TB, features, threshold string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "info/L3_MON")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"mon_features": features, "max_threshold_occupancy": threshold} {
		if text == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestReadLimboThreshold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, features, threshold string
		want                      uint64
		on, err                   bool
	}{
		{"llc_occupancy", "llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n", "1048576\n", 1 << 20, true, false},
		{"bandwidth only: no limbo", "mbm_total_bytes\nmbm_local_bytes\n", "1048576\n", 0, false, false},
		{"no L3 monitoring", "", "", 0, false, false},
		{"threshold missing", "llc_occupancy\n", "", 0, true, true},
		{"threshold garbage", "llc_occupancy\n", "lots\n", 0, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := limboRoot(t, tc.features, tc.threshold)
			if tc.features == "" {
				root = t.TempDir()
			}
			got, on, err := resctrlfs.ReadLimboThreshold(root)
			if got != tc.want || on != tc.on || (err != nil) != tc.err {
				t.Errorf("ReadLimboThreshold = %d, %v, %v; want %d, %v, error %v", got, on, err, tc.want, tc.on, tc.err)
			}
		})
	}
}

// Whatever the files hold, a threshold or an error, never a panic.
func FuzzReadLimboThreshold(f *testing.F) {
	f.Add("llc_occupancy\n", "1048576\n")
	f.Add("mbm_total_bytes\n", "x")
	f.Add("llc_occupancy", "-1")
	f.Fuzz(func(t *testing.T, features, threshold string) {
		root := limboRoot(t, features, threshold)
		if _, _, err := resctrlfs.ReadLimboThreshold(root); err != nil && err.Error() == "" {
			t.Fatal("an error without words")
		}
	})
}
