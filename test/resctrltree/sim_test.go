package resctrltree

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

var update = flag.Bool("update", false, "rewrite testdata/sim from the simulator")

// simOptions are the simulator's options the sim tree is taken with: two L3 domains and
// Intel AET's PERF_PKG.
var simOptions = resctrlsim.Options{L3Domains: 2, PerfPkgDomains: 1}

// fixed are the files whose content is the host's, not the simulator's (its tasks, its CPUs):
// the tree holds the same for every host.
var fixed = map[string]string{
	"tasks":                              "1\n",
	"mon_groups/" + UIDActive + "/tasks": "1\n999999999\n",
	"cpus":                               "3\n",
	"cpus_list":                          "0-1\n",
}

// TestSimTree: testdata/sim is the simulator's layout, file for file, with the trees' groups
// made in it; with -update it is written again from the simulator. It needs the simulator
// (root and FUSE), and skips without it.
func TestSimTree(t *testing.T) {
	sim := resctrlsim.MountT(t, simOptions)
	for _, d := range []string{"mon_groups/" + UIDActive, "mon_groups/" + Foreign, Class, Class + "/mon_groups/" + UIDIdle} {
		if err := os.Mkdir(filepath.Join(sim.Dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(testdata(), Sim)
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := copyTree(dir, sim.Dir); err != nil {
			t.Fatal(err)
		}
	}
	want, err := files(sim.Dir)
	if err != nil {
		t.Fatal(err)
	}
	have, err := files(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(have, want) {
		t.Errorf("testdata/sim is not the simulator's layout (go test -run TestSimTree -update rewrites it):\n have %q\n want %q", have, want)
	}
}

// files lists the files of the tree at root (through a link, if root is one), by path below it.
func files(root string) ([]string, error) {
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	var out []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		out = append(out, rel)
		return err
	})
	return out, err
}

// copyTree copies the readable files of the simulator at src into dst, those of fixed with
// the content fixed gives them; a file the simulator will not read (write-only) is empty.
func copyTree(dst, src string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, ok := []byte(fixed[rel]), fixed[rel] != ""
		if !ok {
			if b, err = os.ReadFile(path); err != nil {
				b = nil
			}
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

// TestTreesMatchSim: the hand-made trees of the layouts the simulator also models are laid
// out as it lays them out: a group's mon_data (SNC's nodes, ABMC's counters) and its
// mbm_L3_assignments file, and info/L3_MON's files (each of the tree's is one of the
// simulator's). It needs the simulator (root and FUSE), and skips without it.
func TestTreesMatchSim(t *testing.T) {
	for tree, o := range map[string]resctrlsim.Options{
		L3:       {L3Domains: 2},
		SNC:      {L3Domains: 2, SNCWays: 2},
		MBMEvent: {L3Domains: 2, MBMAssign: resctrlsim.MBMAssignEvent},
	} {
		t.Run(tree, func(t *testing.T) {
			sim := resctrlsim.MountT(t, o)
			group := filepath.Join("mon_groups", UIDActive)
			if err := os.Mkdir(filepath.Join(sim.Dir, group), 0o755); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(testdata(), tree)
			for _, sub := range []string{filepath.Join(group, "mon_data"), filepath.Join("info", "L3_MON")} {
				want, err := files(filepath.Join(sim.Dir, sub))
				if err != nil {
					t.Fatal(err)
				}
				have, err := files(filepath.Join(dir, sub))
				if err != nil {
					t.Fatal(err)
				}
				if sub == filepath.Join("info", "L3_MON") {
					have = slices.DeleteFunc(have, func(f string) bool { return slices.Contains(want, f) })
					if len(have) > 0 {
						t.Errorf("%s/%s: files the simulator has not: %q", tree, sub, have)
					}
					continue
				}
				if !slices.Equal(have, want) {
					t.Errorf("%s/%s:\n have %q\n the simulator's %q", tree, sub, have, want)
				}
			}
			_, simErr := os.Stat(filepath.Join(sim.Dir, group, "mbm_L3_assignments"))
			_, treeErr := os.Stat(filepath.Join(dir, group, "mbm_L3_assignments"))
			if (simErr == nil) != (treeErr == nil) {
				t.Errorf("%s: mbm_L3_assignments: the simulator's %v, the tree's %v", tree, simErr, treeErr)
			}
		})
	}
}
