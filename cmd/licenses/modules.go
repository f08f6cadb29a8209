package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// listFormat is the `go list -f` template whose output parseModules reads: one line per
// package, empty for the standard library's (they belong to no module), otherwise the
// package's module as path, version, directory and whether it is the main module,
// tab-separated. A replaced module's files are the replacement's, so the directory is the
// replacement's too, and its path and version follow for the record.
const listFormat = "{{with .Module}}{{.Path}}\t{{.Version}}\t" +
	"{{with .Replace}}{{.Dir}}{{else}}{{.Dir}}{{end}}\t{{.Main}}\t" +
	"{{with .Replace}}{{.Path}}\t{{.Version}}{{else}}\t{{end}}{{end}}"

// module is one module linked into the binaries, as `go list` describes it.
type module struct {
	Path, Version string
	// Dir holds the module's files: the module cache's copy, or the replacement's.
	Dir  string
	Main bool
	// ReplacePath and ReplaceVersion name the replacement, if any.
	ReplacePath, ReplaceVersion string
}

// String is the module as `go version -m` names it: path, version and any replacement.
func (m module) String() string {
	s := m.Path + " " + m.Version
	if m.ReplacePath != "" {
		s += " => " + m.ReplacePath + " " + m.ReplaceVersion
	}
	return strings.TrimRight(s, " ")
}

// parseModules reads listFormat's output: the modules of the packages listed, each once,
// sorted by path. Every module path becomes a directory of the tree written, so a path that
// is not a clean relative slash path (.., a leading /, a backslash) is refused rather than
// written outside it.
func parseModules(r io.Reader) ([]module, error) {
	seen := map[string]module{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue // a standard-library package
		}
		f := strings.Split(line, "\t")
		if len(f) != 6 {
			return nil, fmt.Errorf("go list line %d: %q: want 6 tab-separated fields, got %d", n, line, len(f))
		}
		m := module{Path: f[0], Version: f[1], Dir: f[2], ReplacePath: f[4], ReplaceVersion: f[5]}
		switch f[3] {
		case "true":
			m.Main = true
		case "false":
		default:
			return nil, fmt.Errorf("go list line %d: module %s: main %q, want true or false", n, m.Path, f[3])
		}
		if err := checkModule(m); err != nil {
			return nil, fmt.Errorf("go list line %d: %w", n, err)
		}
		if old, ok := seen[m.Path]; ok && old != m {
			return nil, fmt.Errorf("go list line %d: module %s listed twice, as %q and %q", n, m.Path, old, m)
		}
		seen[m.Path] = m
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read go list output: %w", err)
	}
	mods := make([]module, 0, len(seen))
	mains := 0
	for _, m := range seen {
		if m.Main {
			mains++
		}
		mods = append(mods, m)
	}
	if mains > 1 {
		return nil, errors.New("go list: more than one main module")
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].Path < mods[j].Path })
	return mods, nil
}

// checkModule refuses what cannot name a directory of the tree, or a module with no files.
func checkModule(m module) error {
	p := m.Path
	if p == "" || strings.ContainsAny(p, "\\\x00") || path.IsAbs(p) || path.Clean(p) != p ||
		p == ".." || strings.HasPrefix(p, "../") || p == stdDir || p == "." {
		return fmt.Errorf("module path %q: want a clean relative slash path", p)
	}
	if m.Dir == "" {
		// go list leaves Dir empty for a module missing from the module cache.
		return fmt.Errorf("module %s: no directory (not downloaded? run go mod download)", p)
	}
	if !m.Main && m.Version == "" && m.ReplacePath == "" {
		return fmt.Errorf("module %s: no version", p)
	}
	return nil
}
