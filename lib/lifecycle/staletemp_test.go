package lifecycle

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A writer killed between writing its temporary file and renaming it (kill -9, the OOM
// killer) leaves a .tmp-* file that nothing renames: the sweep removes the old ones, and
// leaves alone one that a writer may still be about to rename.
func TestSweepRemovesOldTempFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t, bareFake(2))
	dir := e.m.Store().Dir()
	var old, fresh []string
	for _, sub := range []string{"groups", "containers"} {
		o := filepath.Join(dir, sub, ".tmp-"+podA+".json-123")
		f := filepath.Join(dir, sub, ".tmp-"+podB+".json-456")
		for _, p := range []string{o, f} {
			if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		long := e.now.Add(-time.Hour)
		if err := os.Chtimes(o, long, long); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f, e.now, e.now); err != nil {
			t.Fatal(err)
		}
		old, fresh = append(old, o), append(fresh, f)
	}
	// A binding left as a dangling temporary symlink.
	link := filepath.Join(dir, "containers", ".tmp-c1-789")
	if err := os.Symlink(podA, link); err != nil {
		t.Fatal(err)
	}
	long := e.now.Add(-time.Hour)
	if err := lchtimes(link, long); err != nil {
		t.Fatal(err)
	}
	old = append(old, link)
	if _, err := e.m.Sweep(); err != nil {
		t.Fatal(err)
	}
	for _, p := range old {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left by a killed writer is still there (%v)", p, err)
		}
	}
	for _, p := range fresh {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s, a writer's file of a moment ago, was removed: %v", p, err)
		}
	}
}

// lchtimes sets a symbolic link's own times (os.Chtimes follows links).
func lchtimes(path string, t time.Time) error {
	ts := []unix.Timespec{unix.NsecToTimespec(t.UnixNano()), unix.NsecToTimespec(t.UnixNano())}
	return unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, unix.AT_SYMLINK_NOFOLLOW)
}
