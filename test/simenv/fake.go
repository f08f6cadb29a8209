package simenv

import (
	"cmp"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlfake"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// Defaults of resctrlsim's Options (Options.withDefaults) that Fake follows.
const (
	simDefaultRMIDs       = 64
	simDefaultMBMCounters = 32
)

// FakeEnv is one test's in-memory resctrl, set up as New's simulator would be, and the same
// configuration around it.
type FakeEnv struct {
	Fake *resctrlfake.Resctrl
	// Groups is what the code under test is given: Fake, or Fake with RMIDs in limbo when
	// the options ask for it: resctrlfake.WithLimbo for a LimboTime (dirty for the rest of
	// the test), resctrlfake.WithOccupancyLimbo for Limbo (the kernel's, by occupancy).
	Groups resctrlfs.Groups
	Dir    string
	// Config is New's, but its ResctrlRoot is none: nothing may open it, the code under test
	// is given Groups.
	Config config.Config
}

// Fake is New on the in-memory fake (test/resctrlfake), for tests that run one body on both:
// NumRMIDs-1 groups (RMID 0 is the root group's, as in the simulator), RMIDs in limbo for
// longer than any test when LimboTime is set, the kernel's limbo when Limbo is (its worker
// on a ticker of LimboInterval, 1s by default, as the simulator's; Backend.LimboPass runs a
// pass at once), the counters of one L3 domain as the
// simulator's default mount has (the l3 fixture tree's first domain) or of both the tree has
// (L3Domains 2), and in mbm_event mode (MBMAssign) MBMCounters counters a domain, the root
// group holding its own first, as at mount. Options the
// fake does not model fail the test: such a test runs on the simulator only.
func Fake(t testing.TB, o resctrlsim.Options) *FakeEnv {
	t.Helper()
	rest := o
	rest.NumRMIDs, rest.LimboTime, rest.Debug, rest.L3Domains = 0, 0, false, 0
	rest.Limbo, rest.LimboInterval = false, 0
	if o.MBMAssign == resctrlsim.MBMAssignEvent {
		rest.MBMAssign, rest.MBMCounters = resctrlsim.MBMAssignAbsent, 0
	}
	domains := cmp.Or(o.L3Domains, 1)
	if !reflect.DeepEqual(rest, resctrlsim.Options{}) || domains > 2 {
		t.Fatalf("the fake models NumRMIDs, LimboTime, Limbo, up to 2 L3Domains and MBMAssign: MBMAssignEvent with its MBMCounters "+
			"of the simulator's options, not %+v", o)
	}
	fake := resctrlfake.New(cmp.Or(o.NumRMIDs, simDefaultRMIDs) - 1)
	tree := resctrlfake.Tree(t, "l3")
	if domains == 1 {
		if err := os.RemoveAll(filepath.Join(tree, "mon_data", "mon_L3_01")); err != nil {
			t.Fatal(err)
		}
	}
	fake.UseTree(tree)
	if o.MBMAssign == resctrlsim.MBMAssignEvent {
		fake.SetAssignMode(resctrlfs.AssignModeEvent, domains, cmp.Or(o.MBMCounters, simDefaultMBMCounters))
	}
	var rs resctrlfs.Groups = fake
	switch {
	case o.LimboTime > 0:
		rs = resctrlfake.WithLimbo(fake)
	case o.Limbo:
		l := resctrlfake.WithOccupancyLimbo(fake)
		t.Cleanup(l.Run(cmp.Or(o.LimboInterval, time.Second)))
		rs = l
	}
	dir := t.TempDir()
	cfg := config.Default()
	cfg.ResctrlRoot = "/nonexistent-resctrl"
	cfg.StateDir, cfg.SnapshotDir, cfg.Log = filepath.Join(dir, "state"), filepath.Join(dir, "snap"), "stderr"
	return &FakeEnv{Fake: fake, Groups: rs, Dir: dir, Config: cfg}
}

// Both runs body as two parallel subtests, "fake" and "sim", given fake and then sim: a
// package's two ways of building its test env, one on Fake and one on New.
func Both[T any](t *testing.T, fake, sim T, body func(t *testing.T, newEnv T)) {
	t.Helper()
	for _, b := range []struct {
		name string
		new  T
	}{{"fake", fake}, {"sim", sim}} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			body(t, b.new)
		})
	}
}

// Backend is a test's resctrl as the test itself reads it back and changes it beside the
// code under test: the simulator's files when Sim is set, else the fake's model. Each method
// says how the fake stands for the simulator.
type Backend struct {
	Sim  *resctrlsim.Sim
	Fake *resctrlfake.Resctrl
	// Limbo is the fake's limbo when it has one (FakeEnv.Groups), for LimboPass.
	Limbo *resctrlfake.Limbo
}

// SetOccupancy holds the llc_occupancy of the group at path at bytes, in every domain, and
// its RMID's once the group is removed, until ClearOccupancy: the simulator's counter
// command, the fake's SetOccupancy.
func (b Backend) SetOccupancy(group string, bytes uint64) {
	if b.Sim != nil {
		b.Sim.SetOccupancy(group, bytes)
		return
	}
	b.Fake.SetOccupancy(group, bytes)
}

// ClearOccupancy lets the lines SetOccupancy held go.
func (b Backend) ClearOccupancy(group string) {
	if b.Sim != nil {
		b.Sim.ClearOccupancy(group)
		return
	}
	b.Fake.ClearOccupancy(group)
}

// LimboPass runs one pass of the limbo worker now and returns how many RMIDs it freed: on the
// simulator beside its own ticker, on the fake the only way one runs.
func (b Backend) LimboPass() int {
	if b.Sim != nil {
		return b.Sim.LimboPass()
	}
	if b.Limbo == nil {
		return 0
	}
	return b.Limbo.Pass()
}

// InLimbo is how many freed RMIDs are dirty.
func (b Backend) InLimbo() int {
	if b.Sim != nil {
		return b.Sim.Status().RMIDsInLimbo
	}
	if b.Limbo == nil {
		return 0
	}
	return b.Limbo.InLimbo()
}

// Exists reports whether the monitoring group at path is there.
func (b Backend) Exists(group string) bool {
	if b.Sim != nil {
		_, err := os.Stat(filepath.Join(b.Sim.Dir, group))
		return err == nil
	}
	a, err := resctrlfs.ParseAddr(group)
	return err == nil && b.Fake.Exists(a)
}

// Mkdir makes the monitoring group at path as another tool (or an earlier process) does.
func (b Backend) Mkdir(group string) error {
	if b.Sim != nil {
		return os.Mkdir(filepath.Join(b.Sim.Dir, group), 0o755)
	}
	return b.Fake.Mkdir(group)
}

// RuntimeGroup makes the monitoring group runc ≥ 1.4 makes for a container whose spec sets
// linux.intelRdt.enableMonitoring, before any hook: <class>/mon_groups/<container id>, a
// group already there taken as is, with the init's pid written into it (the pid in class
// already). It returns the group's path.
func (b Backend) RuntimeGroup(class, containerID string, pid int) (string, error) {
	if b.Sim == nil {
		return b.Fake.RuntimeGroup(class, containerID, pid)
	}
	group := resctrlfs.GroupPath(class, containerID)
	dir := filepath.Join(b.Sim.Dir, group)
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return group, err
	}
	return group, os.WriteFile(filepath.Join(dir, "tasks"), []byte(strconv.Itoa(pid)), 0)
}

// RMID is the RMID the group holds, -1 when it is not there. The fake numbers no RMIDs: a
// group holds one RMID from its mkdir to its removal, so its RMID stands for which group of
// that path it is, counted from 1 (the first mkdir), as the simulator's counts from 1.
func (b Backend) RMID(group string) int {
	if b.Sim != nil {
		return b.Sim.RMID(group)
	}
	if !b.Exists(group) {
		return -1
	}
	n := 1
	for _, p := range b.Fake.Removed() {
		if p == group {
			n++
		}
	}
	return n
}

// GroupAssignment is the counters assigned to the group at path (its mbm_L3_assignments):
// on the simulator the file, read as the kernel's; on the fake its model.
func (b Backend) GroupAssignment(group string) (resctrlfs.GroupAssignment, error) {
	if b.Sim != nil {
		return resctrlfs.ReadGroupAssignment(b.Sim.Dir, group)
	}
	a, err := resctrlfs.ParseAddr(group)
	if err != nil {
		return resctrlfs.GroupAssignment{}, err
	}
	return b.Fake.GroupAssignment(a)
}
