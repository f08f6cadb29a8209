package resctrlfs

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// However many groups are written to, no more than maxTasksFiles files stay open, and a
// file closed to make room is opened again when its group is written to.
func TestTasksFilesBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var tf tasksFiles
	path := func(i int) string { return filepath.Join(dir, fmt.Sprint(i)) }
	for i := range maxTasksFiles + 50 {
		if err := os.WriteFile(path(i), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		e, err := tf.acquire(path(i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.f.WriteString("1\n"); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		tf.release(e)
	}
	if n := len(tf.files); n != maxTasksFiles {
		t.Errorf("%d files open, want %d", n, maxTasksFiles)
	}
	for i := range maxTasksFiles + 50 {
		e, err := tf.acquire(path(i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.f.WriteString("2\n"); err != nil {
			t.Errorf("write %d after the files were turned over: %v", i, err)
		}
		tf.release(e)
	}
	tf.forget("no-such-group")
	if n := len(tf.files); n != maxTasksFiles {
		t.Errorf("forgetting another group closed files: %d open", n)
	}
}

// A file let go while a write uses it is closed when that write is done, not under it.
func TestTasksFileClosedAfterItsLastUse(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tasks")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var tf tasksFiles
	a, err := tf.acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tf.acquire(path) // a second writer of the same group
	if err != nil || b != a {
		t.Fatalf("second acquire: %p, %v; want the same file", b, err)
	}
	tf.forget(filepath.Base(filepath.Dir(path))) // the group removed meanwhile
	if _, err := a.f.WriteString("1\n"); err != nil {
		t.Errorf("a write in use while its group was let go: %v", err)
	}
	tf.release(a)
	if _, err := b.f.WriteString("2\n"); err != nil {
		t.Errorf("the other writer, its file still in use: %v", err)
	}
	tf.release(b)
	if _, err := b.f.WriteString("3\n"); err == nil {
		t.Error("the file is still open after its last use")
	}
	if len(tf.files) != 0 {
		t.Errorf("%d files kept for a group let go", len(tf.files))
	}
}
