package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A symbolic link anywhere in the dir's path is not followed, not only at its last name: a
// link planted at a parent would send root's writes and Prune's unlinks wherever it points.
func TestSymlinkParentRefused(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	target := filepath.Join(base, "elsewhere")
	if err := os.MkdirAll(filepath.Join(target, "snapshots"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := sample(uid, End)
	if _, err := Write(filepath.Join(target, "snapshots"), old); err != nil {
		t.Fatal(err)
	}
	old.Kind = Begin
	if _, err := Write(filepath.Join(target, "snapshots"), old); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "run")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(link, "snapshots"), filepath.Join(link, "new", "snapshots")} {
		_, err := Write(dir, sample("other", Begin))
		if !errors.Is(err, ErrSymlinkDir) || !strings.Contains(err.Error(), link+" is a symbolic link") {
			t.Errorf("Write into %s: error %v, want ErrSymlinkDir naming %s", dir, err, link)
		}
		removed, err := Prune(dir, PrunePolicy{MaxCount: -1, MaxAge: 1, Now: now})
		if removed != 0 || !errors.Is(err, ErrSymlinkDir) {
			t.Errorf("Prune of %s: removed %d, error %v, want ErrSymlinkDir", dir, removed, err)
		}
		if _, err := List(dir); !errors.Is(err, ErrSymlinkDir) {
			t.Errorf("List of %s: %v, want ErrSymlinkDir", dir, err)
		}
	}
	expect(t, filepath.Join(target, "snapshots"), FileName(uid, life0, Begin), FileName(uid, life0, End))
	if _, err := os.Lstat(filepath.Join(target, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a directory was made through the link: %v", err)
	}
	// A real path, made as deep as needed, still works.
	deep := filepath.Join(base, "a", "b", "snapshots")
	for _, k := range []Kind{Begin, End} {
		if _, err := Write(deep, sample(uid, k)); err != nil {
			t.Fatal(err)
		}
	}
	expect(t, deep, FileName(uid, life0, Begin), FileName(uid, life0, End))
}
