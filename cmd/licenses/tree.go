package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// stdDir is where the Go toolchain's own LICENSE and PATENTS go: the standard library and
// runtime are linked into every binary, yet belong to no module. "std" cannot be the path of
// a dependency (whose first element needs a dot).
const stdDir = "std"

// indexName lists every module of the tree with its version, for a reader and for the test
// that compares it with `go version -m`.
const indexName = "modules.txt"

// licensePrefixes name the files a module ships its terms in (compared in upper case):
// LICENSE, LICENCE, COPYING, NOTICE and PATENTS, with any suffix (LICENSE.md, LICENSE.BSD,
// NOTICE.txt). Apache-2.0 asks for NOTICE files to be passed on; Go's PATENTS grant too.
var licensePrefixes = []string{"LICENSE", "LICENCE", "COPYING", "NOTICE", "PATENTS"}

// isLicenseFile reports whether a file name at a module's root is one to copy.
func isLicenseFile(name string) bool {
	upper := strings.ToUpper(name)
	for _, p := range licensePrefixes {
		if strings.HasPrefix(upper, p) {
			return true
		}
	}
	return false
}

// licenseFiles lists the license files at the root of dir, sorted. Only regular files: a
// directory such as LICENSES/ is not looked into, so a module shipping only that fails
// by name instead of passing silently.
func licenseFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && isLicenseFile(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// writeTree writes the license files of mods under out: the main module's at the root of
// out, each other module's in out/<module path>/, the toolchain's (from goroot) in out/std/,
// and the index. Every module without a license file is named in the error, all of them at
// once. The tree is built beside out and renamed into place, so out is either the previous
// tree or the whole new one.
func writeTree(out string, mods []module, goroot, goVersion string) (err error) {
	parent := filepath.Dir(filepath.Clean(out))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("make %s: %w", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return fmt.Errorf("make the tree beside %s: %w", out, err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	var errs []error
	index := []string{stdDir + " " + goVersion}
	for _, m := range mods {
		dst := tmp
		if !m.Main {
			dst = filepath.Join(tmp, filepath.FromSlash(m.Path))
			index = append(index, m.String())
		}
		if err := copyLicenses(m.Dir, dst); err != nil {
			errs = append(errs, fmt.Errorf("module %s: %w", m, err))
		}
	}
	if err := copyLicenses(goroot, filepath.Join(tmp, stdDir)); err != nil {
		errs = append(errs, fmt.Errorf("the Go toolchain (GOROOT %s): %w", goroot, err))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	sort.Strings(index[1:])
	if err := os.WriteFile(filepath.Join(tmp, indexName), []byte(strings.Join(index, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", indexName, err)
	}
	// MkdirTemp made it 0700: the tree goes into an image and a tarball, readable by all.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp, err)
	}
	if err := os.RemoveAll(out); err != nil {
		return fmt.Errorf("remove the old %s: %w", out, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("move the tree to %s: %w", out, err)
	}
	return nil
}

// errNoLicense is a module that ships no license file at its root.
var errNoLicense = errors.New("no LICENSE, LICENCE, COPYING, NOTICE or PATENTS file")

// copyLicenses copies the license files at the root of src into dst (made as needed),
// readable by all whatever their mode in the module cache (read-only there).
func copyLicenses(src, dst string) error {
	names, err := licenseFiles(src)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("%s: %w", src, errNoLicense)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("make %s: %w", dst, err)
	}
	for _, n := range names {
		if err := copyFile(filepath.Join(src, n), filepath.Join(dst, n)); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("open %s: %w", src, err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", dst, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("close %s: %w", dst, err)
	}
	return nil
}
