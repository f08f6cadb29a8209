package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An existing state dir is not used as it is: one others may write to is made private
// (0700, as Open makes it), and one another user owns is refused, since its owner could
// change records and locks under root's feet.
func TestExistingStateDirMadePrivateOrRefused(t *testing.T) {
	t.Parallel()
	wide := filepath.Join(t.TempDir(), "state")
	for _, d := range []string{wide, filepath.Join(wide, locksDir)} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Open(wide); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{wide, filepath.Join(wide, locksDir)} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want mode 0700", d, fi.Mode(), err)
		}
	}
	// Readable by others but not writable: an admin's choice, kept.
	readable := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(readable, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(readable, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(readable); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(readable); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("%s: %v, %v; want 0755 kept", readable, fi.Mode(), err)
	}

	// A shared directory (sticky, like /tmp) is refused, never changed.
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(shared); err == nil || !strings.Contains(err.Error(), "shared directory") {
		t.Errorf("a sticky world-writable state dir: %v, want refused", err)
	}
	if fi, err := os.Stat(shared); err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("the shared directory was changed: %v, %v", fi.Mode(), err)
	}

	if os.Geteuid() != 0 {
		t.Skip("giving a directory to another user takes root")
	}
	for _, sub := range []string{"", countsDir} {
		foreign := filepath.Join(t.TempDir(), "state")
		if err := os.MkdirAll(filepath.Join(foreign, sub), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(filepath.Join(foreign, sub), 12345, 12345); err != nil {
			t.Fatal(err)
		}
		_, err := Open(foreign)
		if err == nil || !strings.Contains(err.Error(), "owned by uid 12345") {
			t.Errorf("state dir with %q owned by another user: %v, want refused naming the owner", sub, err)
		}
	}
}
