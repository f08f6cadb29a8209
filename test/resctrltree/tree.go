// Package resctrltree holds resctrl fixture trees for the read side's tests (inventory, the
// exporter, top, resctrlfs.View), as node_exporter keeps its /sys fixtures: plain directories
// laid out as a resctrl mount, read through resctrlfs.View with a mount check that accepts
// them (Mount), so those tests run without root or FUSE. Each tree holds the same groups:
//
//   - mon_groups/<UIDActive>: an owned pod's group, with live tasks (pid 1);
//   - <Class>/mon_groups/<UIDIdle>: an owned pod's group in an allocation class;
//   - mon_groups/<Foreign>: a group runc made for a container, not ours;
//   - no group for UIDPending (no RMID) and UIDMissing (its group disappeared).
//
// State writes the registry that owns them. The trees:
//
//   - l3: Intel RDT, two L3 domains, one counter Unavailable, one Error;
//   - aet: L3 beside Intel AET's PERF_PKG energy and activity (Linux ≥ 7.0), whose num_rmids
//     is the smaller;
//   - mbm-event: AMD ABMC's counter assignment (Linux ≥ 6.18), bandwidth Unassigned where no
//     counter is;
//   - snc: Intel Sub-NUMA Cluster (Linux ≥ 6.11), each L3 domain's sums with mon_sub_L3_YY per
//     node;
//   - sim: the simulator's (test/resctrlsim) layout, written by TestSimTree -update.
//
// TestTreesMatchSim holds the l3, snc and mbm-event trees to the simulator's layouts of the same
// kernels (a group's mon_data and mbm_L3_assignments, info/L3_MON's files).
//
// The owned active group of l3, aet and mbm-event is test/resctrlfake's fixture tree of that
// name, through symlinks: one copy of those counters for the fake and the read side. The
// hand-made trees are written by mktrees.sh from the kernel's documented layouts
// (Documentation/filesystems/resctrl.rst). testdata/cgroup holds the pods' pressure files
// (Proc).
package resctrltree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The trees, by name.
const (
	L3       = "l3"
	AET      = "aet"
	MBMEvent = "mbm-event"
	SNC      = "snc"
	Sim      = "sim"
)

// Names lists every tree.
var Names = []string{L3, AET, MBMEvent, SNC, Sim}

// The groups of every tree, and the pods of State's records.
const (
	UIDActive  = "6a1f3c2e-0000-4000-8000-00000000000a"
	UIDIdle    = "6a1f3c2e-0000-4000-8000-00000000000b"
	UIDPending = "6a1f3c2e-0000-4000-8000-00000000000c"
	UIDMissing = "6a1f3c2e-0000-4000-8000-00000000000d"
	// Foreign is a container's own group (runtime-spec enableMonitoring): not ours.
	Foreign = "f00dcafe00000000000000000000000000000000000000000000000000000001"
	// Class is the allocation class (a control group) UIDIdle's group is in.
	Class = "gold"
)

// testdata is this package's testdata directory, found from this file's path: the tests that
// read it run in other packages' directories.
func testdata() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("resctrltree: no caller information")
	}
	return filepath.Join(filepath.Dir(file), "testdata")
}

// Dir is the absolute path of the tree name.
func Dir(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(testdata(), name)
	if err := Mount(dir); err != nil {
		t.Fatalf("fixture tree %q: %v", name, err)
	}
	return dir
}

// Mount is the mount check a test injects (resctrlfs.Mount) for a fixture tree: it takes a
// tree of this package (a plain directory with info/L3_MON, as Check wants of resctrl) and
// refuses anything else, so a fixture test cannot read a real mount by mistake.
func Mount(root string) error {
	rel, err := filepath.Rel(testdata(), root)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || strings.ContainsRune(rel, filepath.Separator) {
		return fmt.Errorf("resctrl root %s: not a fixture tree of %s", root, testdata())
	}
	if _, err := os.Stat(filepath.Join(root, "info", "L3_MON")); err != nil {
		return errors.Join(fmt.Errorf("resctrl root %s: no info/L3_MON", root), err)
	}
	return nil
}
