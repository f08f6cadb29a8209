package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Every relative link and #anchor in README.md, test/README.md and docs/ leads somewhere.
func TestLinksResolve(t *testing.T) {
	t.Parallel()
	files, err := Markdown(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("only %d markdown files found: %q", len(files), files)
	}
	for _, err := range CheckLinks(root, files) {
		t.Error(err)
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]string{
		"Why it is correct where others race":          "why-it-is-correct-where-others-race",
		"`hostPID` and namespaces":                     "hostpid-and-namespaces",
		"A counter is missing, or reads `Unavailable`": "a-counter-is-missing-or-reads-unavailable",
		"Seeing what it did: `resctrl-mon status`":     "seeing-what-it-did-resctrl-mon-status",
		"The [NRI](x.md) adapter's events":             "the-nri-adapters-events",
		"snake_case and  two spaces":                   "snake_case-and--two-spaces",
		"Exporting to Prometheus: `resctrl-mon serve`": "exporting-to-prometheus-resctrl-mon-serve",
	} {
		if got := Slug(h); got != want {
			t.Errorf("Slug(%q) = %q, want %q", h, got, want)
		}
	}
	a := Anchors("# T\n## Same\n```\n## not a heading\n```\n## Same\n")
	for _, id := range []string{"t", "same", "same-1"} {
		if !a[id] {
			t.Errorf("anchor %q missing from %v", id, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a heading inside a code block was taken")
	}
}

// A broken file link and a broken anchor are both found, and a URL is left alone.
func TestCheckLinksFindsBreakage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# R\n[ok](docs/a.md#b) [gone](docs/none.md) [bad](docs/a.md#nope) [web](https://example.invalid/x) `[code](x.md)`\n")
	write("docs/a.md", "# A\n## B\n[back](../README.md#r) [self](#a)\n```\n[fenced](missing.md)\n```\n")
	errs := CheckLinks(dir, []string{"README.md", "docs/a.md"})
	if len(errs) != 2 {
		t.Fatalf("want 2 errors (a missing file, a missing anchor), got %d: %v", len(errs), errs)
	}
}
