package registry

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Holders of one group's lock never overlap, even while each removes the lock file as it
// leaves (the group has no record), and no lock file is left behind.
func TestUpdateExcludesWhileLockFilesGo(t *testing.T) {
	t.Parallel()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	in, most := 0, 0
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 50 {
				err := s.Update("g", 10*time.Second, func(tx *Tx) error {
					mu.Lock()
					in++
					most = max(most, in)
					mu.Unlock()
					time.Sleep(50 * time.Microsecond)
					mu.Lock()
					in--
					mu.Unlock()
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if most != 1 {
		t.Errorf("%d holders at once", most)
	}
	if es, _ := os.ReadDir(filepath.Join(s.Dir(), locksDir)); len(es) != 0 {
		t.Errorf("lock files left for a group with no record: %v", es)
	}
}

// An owned group keeps its lock file; deleting the record removes it.
func TestUpdateKeepsTheLockOfAnOwnedGroup(t *testing.T) {
	t.Parallel()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(s.Dir(), locksDir, "g.lock")
	if err := s.Update("g", time.Second, func(tx *Tx) error { tx.Rec.Path = "mon_groups/g"; return tx.Save() }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lockPath); err != nil {
		t.Errorf("owned group's lock file: %v", err)
	}
	if err := s.Update("g", time.Second, func(tx *Tx) error {
		if !tx.Owned || tx.Rec.Path != "mon_groups/g" {
			t.Errorf("loaded %+v, owned %v", tx.Rec, tx.Owned)
		}
		return tx.Delete()
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lockPath); !os.IsNotExist(err) {
		t.Errorf("lock file of a forgotten group: %v", err)
	}
}

// A state dir, or a directory in it, that is a symlink is refused, and nothing is written
// through it.
func TestOpenRefusesSymlinks(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	target := filepath.Join(base, "elsewhere")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "state")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(link); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a symlinked state dir: %v", err)
	}
	if _, err := OpenReadOnly(link); err == nil {
		t.Errorf("read-only open followed a symlink")
	}
	for _, sub := range []string{groupsDir, countsDir} {
		real := filepath.Join(base, "real-"+sub)
		if err := os.Mkdir(real, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(real, sub)); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(real); err == nil {
			t.Errorf("a symlinked %s dir was accepted", sub)
		}
	}
	if es, _ := os.ReadDir(target); len(es) != 0 {
		t.Errorf("written through the link: %v", es)
	}
	fresh := filepath.Join(base, "fresh", "state")
	if _, err := Open(fresh); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir mode: %v, %v", fi.Mode(), err)
	}
}
