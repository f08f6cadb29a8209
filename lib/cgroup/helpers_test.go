package cgroup

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
)

// skipOrFail skips a test whose precondition is missing, or fails it with
// RESCTRLSIM_REQUIRE=1 (as in CI): a suite that silently skipped would prove nothing.
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("RESCTRLSIM_REQUIRE") == "1" {
		t.Fatalf("%s (RESCTRLSIM_REQUIRE=1 forbids skipping)", msg)
	}
	t.Skip(msg)
}

// newCgroup makes a child cgroup of the cgroup2 hierarchy's root, removed at cleanup after
// every process in it was killed.
func newCgroup(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		skipOrFail(t, "making cgroups needs root")
	}
	root, err := (Host{}).Dir("/")
	if err != nil {
		skipOrFail(t, "no cgroup2 mount: %v", err)
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
		err := poll(10*time.Second, func() error {
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

// poll calls f every 20 ms until it returns nil or timeout passes: for counters, which give
// no event to wait on.
func poll(timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v: %w", timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
