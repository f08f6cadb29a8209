package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// ErrLocked is returned by Lock when another process still holds the lock at the deadline.
var ErrLocked = errors.New("locked by another process")

// Lock is a held per-group lock.
type Lock struct{ f *os.File }

// Lock takes the group's cross-process lock, waiting at most timeout. Hooks of one pod run
// as separate processes at the same time; the lock makes create-and-assign and
// last-stop-and-remove never interleave. flock is released by the kernel if the holder dies,
// so a killed hook cannot wedge a pod.
func (s *Store) Lock(group string, timeout time.Duration) (*Lock, error) {
	f, err := os.OpenFile(filepath.Join(s.dir, locksDir, group+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", group, err)
	}
	fd := int(f.Fd())
	err = flock(fd, unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		return &Lock{f: f}, nil
	}
	if !errors.Is(err, unix.EWOULDBLOCK) {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", group, err)
	}
	// Held: wait in a blocking flock, which the kernel ends the moment the holder lets go
	// (polling slept up to 20 ms past a release). If the deadline comes first, the waiter
	// is left to finish and closes the file, giving back a lock it got too late.
	var waitErr error
	done := make(chan struct{})
	go func() {
		waitErr = flock(fd, unix.LOCK_EX)
		close(done)
	}()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	select {
	case <-done:
		if waitErr != nil {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", group, waitErr)
		}
		return &Lock{f: f}, nil
	case <-deadline.C:
		go func() {
			<-done
			_ = f.Close()
		}()
		return nil, fmt.Errorf("lock %s: %w (waited %s)", group, ErrLocked, timeout)
	}
}

// flock is flock(2), retried when a signal interrupts it.
func flock(fd, how int) error {
	for {
		if err := unix.Flock(fd, how); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	return err
}
