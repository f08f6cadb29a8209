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
	deadline := time.Now().Add(timeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 20*time.Millisecond) {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return &Lock{f: f}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", group, err)
		}
		if time.Now().After(deadline) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w (waited %s)", group, ErrLocked, timeout)
		}
		time.Sleep(wait)
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
