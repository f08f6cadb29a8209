package sysfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, size := range []int{0, 1, 4095, 4096, 4097, 3 * 4096} {
		path := filepath.Join(dir, "f")
		want := bytes.Repeat([]byte("x"), size)
		if err := os.WriteFile(path, want, 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := ReadFile(path, 0, size); !bytes.Equal(got, want) || err != nil {
			t.Errorf("%d bytes, limit %d: got %d bytes, %v", size, size, len(got), err)
		}
		if size > 0 {
			if _, err := ReadFile(path, 0, size-1); !errors.Is(err, ErrTooLong) || !strings.Contains(err.Error(), "longer than") {
				t.Errorf("%d bytes, limit %d: %v", size, size-1, err)
			}
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 0, 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// /proc files report size 0 and are read to their end.
	if b, err := ReadFile("/proc/self/stat", 0, 4096); err != nil || !bytes.HasSuffix(b, []byte("\n")) {
		t.Errorf("/proc/self/stat: %q, %v", b, err)
	}
	if err := os.Symlink("f", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(filepath.Join(dir, "link"), unix.O_NOFOLLOW, 10); !errors.Is(err, unix.ELOOP) {
		t.Errorf("O_NOFOLLOW through a link: %v", err)
	}
}

func TestWriteAtomic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "rec")
	for _, text := range []string{"first", "second, longer"} {
		if err := WriteAtomic(path, []byte(text)); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(path); string(b) != text || err != nil {
			t.Errorf("got %q, %v; want %q", b, err, text)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("files left beside it: %v", es)
	}
	if err := WriteAtomic(filepath.Join(dir, "no", "such"), []byte("x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("into a missing dir: %v", err)
	}
}
