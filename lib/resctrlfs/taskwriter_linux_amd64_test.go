package resctrlfs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/aside"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// Both TaskWriters give the same results on the same tree (regular files standing in for
// the tasks files, without root or FUSE): every id is written by a write of its own, each
// write's result reaches the caller, a result's error stops the loop, and a group that is
// not there is the open's error, with no result. (The kernel's side, a stale file written
// again, is hooks/hook's and tasksfiles_test.go's, on the simulator.)
func TestTaskWriters(t *testing.T) {
	t.Parallel()
	calls, err := aside.NewCalls()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(calls.Close)
	for name, newWriter := range map[string]func(root string) resctrlfs.TaskWriter{
		"file": func(root string) resctrlfs.TaskWriter { return resctrlfs.NewTaskWriter(root) },
		"aside": func(root string) resctrlfs.TaskWriter {
			return &resctrlfs.AsideTaskWriter{Root: root, Calls: calls, Deadline: time.Now().Add(time.Minute)}
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			g := resctrlfs.Addr{Name: "g"}
			if err := os.MkdirAll(filepath.Join(root, g.Path()), 0o755); err != nil {
				t.Fatal(err)
			}
			tasks := filepath.Join(root, g.Path(), "tasks")
			if err := os.WriteFile(tasks, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			w := newWriter(root)
			var got []int
			err := w.Write(g.Path(), []int{11, 22, 33}, func(id int, err error) error {
				if err != nil {
					t.Errorf("write of %d: %v", id, err)
				}
				got = append(got, id)
				return nil
			})
			if b, _ := os.ReadFile(tasks); err != nil || len(got) != 3 || string(b) != "11\n22\n33\n" {
				t.Errorf("Write: %v, results for %v, the file holds %q; want each id in a write of its own", err, got, b)
			}
			stop := errors.New("stop")
			n := 0
			err = w.Write(g.Path(), []int{44, 55}, func(int, error) error { n++; return stop })
			if !errors.Is(err, stop) || n != 1 {
				t.Errorf("a result's error: Write %v after %d results, want it back after one", err, n)
			}
			n = 0
			err = w.Write(resctrlfs.Addr{Name: "gone"}.Path(), []int{66}, func(int, error) error { n++; return nil })
			if !errors.Is(err, fs.ErrNotExist) || n != 0 {
				t.Errorf("a group that is not there: %v after %d results, want ENOENT and none", err, n)
			}
		})
	}
}
