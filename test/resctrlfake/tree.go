package resctrlfake

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// trees are the fixture trees, each a group's directory as the kernel lays it out (mon_data/
// by monitoring domain; the mbm_event one with its info/L3_MON and mbm_L3_assignments too):
//   - l3: two L3 domains, occupancy and bandwidth, one counter Unavailable (Intel RDT);
//   - aet: L3 beside Intel AET's PERF_PKG energy and activity (decimals, as the kernel prints);
//   - mbm-event: counter assignment mode (AMD ABMC, Linux ≥ 6.18), bandwidth Unassigned
//     where no counter is.
//
// test/resctrltree's whole-mount trees of the same names link to these as their active pod's
// group: one copy of these counters for the fake and the read side's fixture tests (a change
// here changes what those tests and the golden scrapes expect).
//
//go:embed testdata
var trees embed.FS

// Tree writes the fixture tree name into a directory of the test's and returns it: a
// directory resctrlfs's readers (MonReader, ReadAssignment, ReadGroupAssignment) and UseTree
// take. Files are copied, so a test may change them.
func Tree(t testing.TB, name string) string {
	t.Helper()
	src, err := fs.Sub(trees, "testdata/"+name)
	if err == nil {
		_, err = fs.Stat(src, ".")
	}
	if err != nil {
		t.Fatalf("fixture tree %q: %v", name, err)
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, src); err != nil {
		t.Fatalf("fixture tree %q: %v", name, err)
	}
	return dir
}
