// Package poll waits for a condition that gives no event to wait on: a container's processes
// after a detached start (the run returns before its shell has forked), counters that only
// move when read, a cgroup that stays busy until its killed processes are reaped. It imports
// nothing of the project, so lib's tests and test/e2e share it.
package poll

import (
	"fmt"
	"time"
)

// Until calls f every 20 ms until it returns nil or timeout passes, and returns f's last
// error, wrapped with how long it waited.
func Until(timeout time.Duration, f func() error) error {
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
