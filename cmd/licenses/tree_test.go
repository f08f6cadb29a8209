package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestIsLicenseFile(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"LICENSE": true, "LICENSE.txt": true, "license.md": true, "LICENCE": true,
		"COPYING": true, "COPYING.md": true, "NOTICE": true, "NOTICE.txt": true,
		"PATENTS": true, "LICENSE.MPL-2.0": true, "README.md": false, "go.mod": false,
		"LICENSES_TEST.go": true, "MY_LICENSE": false,
	} {
		if got := isLicenseFile(name); got != want {
			t.Errorf("isLicenseFile(%q) = %v, want %v", name, got, want)
		}
	}
}

// fakeModule makes a module directory holding files (name -> content); a name ending in /
// is a directory.
func fakeModule(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, f)
		var err error
		if strings.HasSuffix(f, "/") {
			err = os.MkdirAll(p, 0o755)
		} else {
			// Read-only, as the module cache keeps them.
			err = os.WriteFile(p, []byte("terms of "+f), 0o444)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// treeFiles lists the regular files under dir, relative, slash-separated.
func treeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

func TestWriteTree(t *testing.T) {
	t.Parallel()
	goroot := fakeModule(t, "LICENSE", "PATENTS", "README.md", "src/")
	mods := []module{
		{Path: "example.com/me", Dir: fakeModule(t, "LICENSE", "main.go"), Main: true},
		{Path: "a.com/x", Version: "v1.0.0", Dir: fakeModule(t, "LICENSE.BSD", "LICENSE.MPL-2.0", "COPYING.md", "x.go", "LICENSES/")},
		{Path: "a.com/x/sub", Version: "v0.2.0", Dir: fakeModule(t, "license.txt", "NOTICE")},
		{Path: "b.org/y/v2", Version: "v2.1.0", Dir: fakeModule(t, "COPYING"), ReplacePath: "../y", ReplaceVersion: ""},
	}
	// Its parent is made as needed (make licenses before make build: no bin/ yet).
	out := filepath.Join(t.TempDir(), "bin", "licenses")
	old := []module{{Path: "gone.com/z", Version: "v1.0.0", Dir: fakeModule(t, "LICENSE")}}
	if err := writeTree(out, old, goroot, "go1.25.0"); err != nil {
		t.Fatal(err)
	}
	// A previous tree is replaced whole: nothing of it stays.
	if err := writeTree(out, mods, goroot, "go1.26.0"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"LICENSE",
		"a.com/x/COPYING.md", "a.com/x/LICENSE.BSD", "a.com/x/LICENSE.MPL-2.0",
		"a.com/x/sub/NOTICE", "a.com/x/sub/license.txt",
		"b.org/y/v2/COPYING",
		"modules.txt",
		"std/LICENSE", "std/PATENTS",
	}
	if got := treeFiles(t, out); !slices.Equal(got, want) {
		t.Errorf("tree\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	b, err := os.ReadFile(filepath.Join(out, "a.com/x/sub/NOTICE"))
	if err != nil || string(b) != "terms of NOTICE" {
		t.Errorf("a.com/x/sub/NOTICE: %q, %v", b, err)
	}
	index, err := os.ReadFile(filepath.Join(out, indexName))
	if err != nil {
		t.Fatal(err)
	}
	wantIndex := "std go1.26.0\na.com/x v1.0.0\na.com/x/sub v0.2.0\nb.org/y/v2 v2.1.0 => ../y\n"
	if string(index) != wantIndex {
		t.Errorf("%s:\n%s\nwant\n%s", indexName, index, wantIndex)
	}
	for _, p := range []string{out, filepath.Join(out, "a.com/x"), filepath.Join(out, "a.com/x/LICENSE.BSD")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o444 != 0o444 {
			t.Errorf("%s: mode %v, want readable by all", p, fi.Mode())
		}
	}
}

// TestWriteTreeNoLicense: every module without a license file is named, and out keeps what
// it had (no half-written tree).
func TestWriteTreeNoLicense(t *testing.T) {
	t.Parallel()
	goroot := fakeModule(t, "LICENSE")
	mods := []module{
		{Path: "a.com/ok", Version: "v1.0.0", Dir: fakeModule(t, "LICENSE")},
		{Path: "a.com/bare", Version: "v1.2.3", Dir: fakeModule(t, "README.md", "LICENSES/")},
		{Path: "a.com/empty", Version: "v0.0.1", Dir: fakeModule(t)},
	}
	parent := t.TempDir()
	out := filepath.Join(parent, "licenses")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "old"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := writeTree(out, mods, goroot, "go1.26.0")
	if !errors.Is(err, errNoLicense) {
		t.Fatalf("error %v, want errNoLicense", err)
	}
	for _, name := range []string{"a.com/bare v1.2.3", "a.com/empty v0.0.1"} {
		if !strings.Contains(err.Error(), "module "+name+":") {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
	if strings.Contains(err.Error(), "a.com/ok") {
		t.Errorf("error names a module that has a license: %v", err)
	}
	if got := treeFiles(t, parent); !slices.Equal(got, []string{"licenses/old"}) {
		t.Errorf("after a failure the parent holds %q, want the old tree only", got)
	}
}

func TestParseArgs(t *testing.T) {
	t.Parallel()
	var stderr strings.Builder
	o, err := parseArgs([]string{"-tags", "a,b", "-o", "out", "./x", "./y"}, &stderr)
	if err != nil || o.out != "out" || o.tags != "a,b" || !slices.Equal(o.packages, []string{"./x", "./y"}) {
		t.Errorf("parseArgs: %+v, %v", o, err)
	}
	for _, args := range [][]string{{"./x"}, {"-o", "out"}, {"-bogus"}} {
		if _, err := parseArgs(args, &stderr); err == nil {
			t.Errorf("parseArgs(%q): no error", args)
		}
	}
}
