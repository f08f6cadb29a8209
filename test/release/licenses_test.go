package release

import (
	"path/filepath"
	"testing"
)

// TestLicensesCoverLinkedModules builds the four shipped binaries as make does, runs `make
// licenses` into a temporary tree, and checks the tree against `go version -m` of each
// binary (checkLicenses). Only go and make are needed.
func TestLicensesCoverLinkedModules(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	bin := t.TempDir()
	for name, pkg := range shipped {
		runIn(t, root, []string{"CGO_ENABLED=0"}, "go", "build", "-tags", "urfave_cli_no_docs", "-o", filepath.Join(bin, name), pkg)
	}
	tree := filepath.Join(t.TempDir(), "licenses")
	runIn(t, root, nil, "make", "-s", "--no-print-directory", "licenses", "LICENSES="+tree)
	checkLicenses(t, bin, tree)
}
