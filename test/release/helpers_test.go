package release

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// shipped are the binaries a release ships, and the packages they are built from.
var shipped = map[string]string{
	"resctrl-mon":         "./cmd/resctrl-mon",
	"resctrl-mon-hook":    "./hooks/resctrl-mon-hook",
	"resctrl-mon-nri":     "./nri-adapter/resctrl-mon-nri",
	"resctrl-mon-runtime": "./install/resctrl-mon-runtime",
}

// repoRoot is the checkout this package is in.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// readVersion is the VERSION file's version.
func readVersion(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// runIn runs a command in dir with extra environment, failing the test with its output.
func runIn(t testing.TB, dir string, env []string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// linked is what `go version -m` says a binary was built from: the Go version, and each
// dependency as cmd/licenses' modules.txt names it ("path version", "=> path version" after
// it when replaced).
type linked struct {
	goVersion string
	deps      map[string]string // module path -> its modules.txt line
}

// readLinked runs `go version -m` on a binary.
func readLinked(t testing.TB, binary string) linked {
	t.Helper()
	out := runIn(t, "", nil, "go", "version", "-m", binary)
	l := linked{deps: map[string]string{}}
	var last string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for n := 0; sc.Scan(); n++ {
		line := sc.Text()
		if n == 0 {
			// "<file>: go1.26.0"
			l.goVersion = strings.TrimSpace(line[strings.LastIndex(line, ":")+1:])
			continue
		}
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "dep":
			last = f[1]
			l.deps[last] = f[1] + " " + f[2]
		case len(f) >= 2 && f[0] == "=>" && last != "":
			l.deps[last] += " => " + strings.Join(f[1:min(len(f), 3)], " ")
		}
	}
	if l.goVersion == "" || len(l.deps) == 0 {
		t.Fatalf("go version -m %s: no Go version or no dependency:\n%s", binary, out)
	}
	return l
}

// checkLicenses checks a licenses tree (cmd/licenses' output) against the binaries in
// binDir: every module linked into any of them has at least one license file in the tree,
// under its path; the tree has no module none of them links; the toolchain's license is
// in std/; our LICENSE is at the root; modules.txt names exactly the linked modules and
// versions.
func checkLicenses(t *testing.T, binDir, tree string) {
	t.Helper()
	want := map[string]string{} // module path -> modules.txt line
	users := map[string][]string{}
	goVersion := ""
	for _, b := range slices.Sorted(maps.Keys(shipped)) {
		l := readLinked(t, filepath.Join(binDir, b))
		if goVersion != "" && l.goVersion != goVersion {
			t.Errorf("%s built with %s, the others with %s", b, l.goVersion, goVersion)
		}
		goVersion = l.goVersion
		for p, line := range l.deps {
			want[p] = line
			users[p] = append(users[p], b)
		}
	}
	got := treeModules(t, tree)
	for p := range want {
		if len(got[p]) == 0 {
			t.Errorf("module %s (linked into %s) has no license file in %s", want[p], strings.Join(users[p], ", "), tree)
		}
	}
	for p, files := range got {
		if _, ok := want[p]; !ok && p != "std" && p != "." {
			t.Errorf("%s/%s holds %q, but no shipped binary links module %s", tree, p, files, p)
		}
	}
	if len(got["std"]) == 0 {
		t.Errorf("%s/std: no license of the Go toolchain", tree)
	}
	root, err := os.ReadFile(filepath.Join(tree, "LICENSE"))
	ours, err2 := os.ReadFile(filepath.Join(repoRoot(t), "LICENSE"))
	if err != nil || err2 != nil || !bytes.Equal(root, ours) {
		t.Errorf("%s/LICENSE is not this repository's LICENSE: %v %v", tree, err, err2)
	}
	index, err := os.ReadFile(filepath.Join(tree, "modules.txt"))
	if err != nil {
		t.Fatal(err)
	}
	wantIndex := []string{"std " + goVersion}
	for _, p := range slices.Sorted(maps.Keys(want)) {
		wantIndex = append(wantIndex, want[p])
	}
	if g, w := strings.TrimSpace(string(index)), strings.Join(wantIndex, "\n"); g != w {
		t.Errorf("%s/modules.txt:\n%s\nwant (go version -m):\n%s", tree, g, w)
	}
}

// treeModules maps each directory of a licenses tree that holds files (a module's path,
// "std", or "." for the root) to its files.
func treeModules(t *testing.T, tree string) map[string][]string {
	t.Helper()
	mods := map[string][]string{}
	err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			if !d.IsDir() {
				return fmt.Errorf("%s: not a regular file or directory", p)
			}
			return nil
		}
		rel, err := filepath.Rel(tree, filepath.Dir(p))
		mods[filepath.ToSlash(rel)] = append(mods[filepath.ToSlash(rel)], d.Name())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return mods
}
