package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Not parallel: the umask is the process's. Parallel tests start only once the sequential
// ones are done, so none runs under this umask.
func TestWriteCreatesDirWhateverTheUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "a", "b")
	path, err := Write(dir, sample(uid, Begin))
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{dir: 0o755, path: 0o644} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
}

// A symbolic link at the dir's name is not followed, by Write or Prune: the hook runs as
// root, and the link could point anywhere.
func TestSymlinkDirRefused(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	target := filepath.Join(base, "elsewhere")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	// What Prune would remove if it followed the link.
	old := sample(uid, End)
	if _, err := Write(target, old); err != nil {
		t.Fatal(err)
	}
	old.Kind = Begin
	if _, err := Write(target, old); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "snapshots")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(base, "dangling")
	if err := os.Symlink(filepath.Join(base, "missing"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{link, dangling} {
		_, err := Write(dir, sample("other", Begin))
		if !errors.Is(err, ErrSymlinkDir) || !strings.Contains(err.Error(), dir+" is a symbolic link") {
			t.Errorf("Write into %s: error %v, want ErrSymlinkDir naming it", dir, err)
		}
		removed, err := Prune(dir, PrunePolicy{MaxCount: -1, MaxAge: 1, Now: now})
		if removed != 0 || !errors.Is(err, ErrSymlinkDir) || !strings.Contains(err.Error(), dir+" is a symbolic link") {
			t.Errorf("Prune of %s: removed %d, error %v, want ErrSymlinkDir naming it", dir, removed, err)
		}
	}
	expect(t, target, FileName(uid, life0, Begin), FileName(uid, life0, End))
	if _, err := os.Lstat(filepath.Join(base, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dangling link's target was created: %v", err)
	}
}

// A symbolic link at a snapshot's own name is replaced, not written through.
func TestWriteNotThroughSymlink(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(outside, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	name := FileName(uid, life0, End)
	if err := os.Symlink(outside, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	path, err := Write(dir, sample(uid, End))
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(outside); err != nil || string(data) != "keep" {
		t.Errorf("the link's target now holds %q (%v)", data, err)
	}
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("%s: %v, %v; want a regular file in the link's place", path, fi, err)
	}
	if _, err := ReadFile(path); err != nil {
		t.Error(err)
	}
}
