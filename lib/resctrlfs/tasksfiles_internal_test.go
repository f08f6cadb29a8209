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
		f, err := tf.get(path(i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("1\n"); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if n := len(tf.files); n != maxTasksFiles {
		t.Errorf("%d files open, want %d", n, maxTasksFiles)
	}
	for i := range maxTasksFiles + 50 {
		f, err := tf.get(path(i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("2\n"); err != nil {
			t.Errorf("write %d after the files were turned over: %v", i, err)
		}
	}
	tf.forget("no-such-group")
	if n := len(tf.files); n != maxTasksFiles {
		t.Errorf("forgetting another group closed files: %d open", n)
	}
}
