package inventory

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// The total is the smaller positive num_rmids of the two monitoring resources; a file that
// holds no positive count is not a total.
func TestRMIDsTotal(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		l3, perf string // "" for no file
		want     int    // 0 for an error
	}{
		"L3 only":          {"256\n", "", 256},
		"both, smaller":    {"256\n", "64\n", 64},
		"negative L3":      {"-1\n", "64\n", 64},
		"zero L3":          {"0\n", "64\n", 64},
		"negative only":    {"-5\n", "", 0},
		"garbage only":     {"lots\n", "", 0},
		"neither":          {"", "", 0},
		"spaces, a plus":   {"  +32 \n", "", 32},
		"perf below a bad": {"x", "16", 16},
	} {
		root := t.TempDir()
		for f, v := range map[string]string{"info/L3_MON/num_rmids": tc.l3, "info/PERF_PKG_MON/num_rmids": tc.perf} {
			if v == "" {
				continue
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, f), []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		view, err := resctrlfs.OpenView(root, func(string) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		r, err := (&Inventory{view: view}).RMIDs()
		if tc.want == 0 {
			if err == nil {
				t.Errorf("%s: total %d accepted", name, r.Total)
			}
			continue
		}
		if err != nil || r.Total != tc.want || r.Used != 1 {
			t.Errorf("%s: %+v, %v; want total %d, used 1", name, r, err, tc.want)
		}
	}
}
