// Package cgrouptest makes the cgroup v2 directories the cgroup and pressure readers are
// tested on. It takes the hierarchy's root from its caller rather than finding it through
// lib/cgroup, whose own in-package tests use it.
package cgrouptest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

// SkipOrFail skips a test whose precondition is missing, or fails it with
// RESCTRLSIM_REQUIRE=1 (as in CI): a suite that silently skipped would prove nothing.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("RESCTRLSIM_REQUIRE") == "1" {
		t.Fatalf("%s (RESCTRLSIM_REQUIRE=1 forbids skipping)", msg)
	}
	t.Skip(msg)
}

// New makes a child cgroup of root, the cgroup2 hierarchy's root (rootErr: why it was not
// found), removed at cleanup after every process in it was killed.
func New(t *testing.T, root string, rootErr error) string {
	t.Helper()
	if os.Geteuid() != 0 {
		SkipOrFail(t, "making cgroups needs root")
	}
	if rootErr != nil {
		SkipOrFail(t, "no cgroup2 mount: %v", rootErr)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	dir := filepath.Join(root, "psi-test-"+hex.EncodeToString(b))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// cgroup.kill (Linux 5.14) kills every process inside, forks in flight included.
		if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("kill %s: %v", dir, err)
		}
		err := poll.Until(10*time.Second, func() error {
			err := os.Remove(dir)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err // EBUSY until the killed processes are reaped
		})
		if err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	return dir
}
