package resctrltree

import (
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestMkTrees: the hand-made trees are what mktrees.sh writes, file for file and link for link,
// so the script stays the trees' one source.
func TestMkTrees(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to run mktrees.sh:", err)
	}
	dir := t.TempDir()
	script, err := filepath.Abs("mktrees.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mktrees.sh: %v\n%s", err, out)
	}
	for _, tree := range []string{L3, AET, MBMEvent, SNC, "cgroup"} {
		have, err := contents(filepath.Join(testdata(), tree))
		if err != nil {
			t.Fatal(err)
		}
		want, err := contents(filepath.Join(dir, tree))
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(have, want) {
			for _, k := range slices.Sorted(maps.Keys(want)) {
				if have[k] != want[k] {
					t.Errorf("%s/%s: %q, mktrees.sh writes %q", tree, k, have[k], want[k])
				}
			}
			for _, k := range slices.Sorted(maps.Keys(have)) {
				if _, ok := want[k]; !ok {
					t.Errorf("%s/%s: mktrees.sh writes no such file", tree, k)
				}
			}
		}
	}
}

// contents maps each file of the tree at root to its content, and each symlink to "-> target".
func contents(root string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(path)
			out[rel] = "-> " + target
			return err
		}
		b, err := os.ReadFile(path)
		out[rel] = string(b)
		return err
	})
	return out, err
}

// The trees' symlinks reach resctrlfake's fixture trees: a broken one would read as a group
// with no counters.
func TestLinks(t *testing.T) {
	t.Parallel()
	n := 0
	err := filepath.WalkDir(testdata(), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return err
		}
		n++
		if _, err := os.Stat(path); err != nil {
			t.Errorf("broken link: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("no link to resctrlfake's trees")
	}
}
