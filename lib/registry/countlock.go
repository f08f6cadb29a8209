package registry

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// countLockWait bounds the wait for a count file's flock. A holder keeps it for one read and
// one write (microseconds); one that holds it longer was stopped (SIGSTOP, a frozen cgroup,
// a debugger), and waiting for it would hang every hook worker that counts and the exporter's
// collect. Past the bound the count is given up (Count's callers log it: counting never fails
// a call) or left out of the scrape (a source error).
const countLockWait = 500 * time.Millisecond

// countLockPoll is how often a contended count lock is tried again. A blocking flock cannot
// be cancelled, and a goroutine left in one per stuck count would pile up in the long-lived
// exporter; a count is held so briefly that a retry almost always gets it.
const countLockPoll = time.Millisecond

// flockWithin takes fd's flock (how: LOCK_EX or LOCK_SH), waiting at most timeout.
func flockWithin(fd, how int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := flock(fd, how|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (waited %s)", ErrLocked, timeout)
		}
		time.Sleep(countLockPoll)
	}
}
