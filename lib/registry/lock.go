package registry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/sysfile"
)

// ErrLocked is returned when another process still holds the lock at the deadline.
var ErrLocked = errors.New("locked by another process")

// lock is a held per-group lock.
type lock struct {
	fd   int // -1 once released
	path string
}

// lockGroup takes the group's cross-process lock, waiting at most timeout. Hooks of one pod
// run as separate processes at the same time; the lock makes create-and-assign and
// last-stop-and-remove never interleave. flock is released by the kernel if the holder dies,
// so a killed hook cannot wedge a pod.
//
// Lock files are removed with their group (see unlink), so the state dir does not keep one
// per pod ever seen. A waiter may therefore get the flock of a file that its holder has
// just unlinked: it then holds a lock nobody else can see, so it checks, once it has the
// flock, that the path still names the file it locked, and starts over if not. The holder
// unlinks before it lets go, so two processes never both believe they hold one pod's lock.
func (s *Store) lockGroup(group string, timeout time.Duration) (*lock, error) {
	path := filepath.Join(s.dir, locksDir, group+".lock")
	deadline := time.Now().Add(timeout)
	for {
		l, err := s.lockFile(path, time.Until(deadline))
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", group, err)
		}
		if l.current() {
			return l, nil
		}
		_ = l.unlock()
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock %s: %w (waited %s)", group, ErrLocked, timeout)
		}
	}
}

// lockFile opens path and takes its flock, waiting at most timeout.
func (s *Store) lockFile(path string, timeout time.Duration) (*lock, error) {
	deadline := time.Now().Add(timeout)
	for {
		// O_NOFOLLOW: a lock file planted as a symlink is not followed out of the state dir.
		fd, err := sysfile.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return nil, err
		}
		err = flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return &lock{fd: fd, path: path}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			_ = unix.Close(fd)
			return nil, err
		}
		w := s.waiterFor(path, fd)
		t := time.NewTimer(max(time.Until(deadline), 0))
		select {
		case fd := <-w.handoff:
			t.Stop()
			return &lock{fd: fd, path: path}, nil
		case <-w.gone:
			// The lock was let go and handed to another caller, or to none: try again.
			t.Stop()
		case <-t.C:
			return nil, fmt.Errorf("%w (waited %s)", ErrLocked, timeout)
		}
	}
}

// flockWaiter is one blocking flock on a lock file, shared by every caller of a Store
// waiting for that file. Waiting in a blocking flock ends the moment the holder lets go
// (a poll would sleep past the release, up to its interval), but it cannot be cancelled: a caller whose
// deadline comes first leaves it blocked, holding an OS thread. One per file, not one per
// timed-out call, keeps a long-lived process (the NRI adapter, whose events on a pod with
// a stuck lock each time out) from piling them up.
type flockWaiter struct {
	handoff chan int      // the locked descriptor, to a caller waiting when the flock returns
	gone    chan struct{} // closed once the flock returned and the descriptor is handed or closed
}

// waiterFor returns the waiter on path, starting one on fd if there is none; fd is the
// waiter's or closed.
func (s *Store) waiterFor(path string, fd int) *flockWaiter {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	if w := s.waiters[path]; w != nil {
		_ = unix.Close(fd)
		return w
	}
	if s.waiters == nil {
		s.waiters = map[string]*flockWaiter{}
	}
	w := &flockWaiter{handoff: make(chan int), gone: make(chan struct{})}
	s.waiters[path] = w
	go func() {
		if err := flock(fd, unix.LOCK_EX); err != nil {
			_ = unix.Close(fd)
		} else {
			select {
			case w.handoff <- fd:
			default:
				// Nobody waits any more: give back a lock got too late.
				_ = unix.Close(fd)
			}
		}
		s.waitMu.Lock()
		delete(s.waiters, path)
		s.waitMu.Unlock()
		close(w.gone)
	}()
	return w
}

// current reports whether the locked file is still the one at its path. Lock files are
// only ever unlinked (see unlink), never replaced, so the file is current exactly while it
// still has a link: one fstat, where comparing it with a stat of the path took two calls.
func (l *lock) current() bool {
	var held unix.Stat_t
	return unix.Fstat(l.fd, &held) == nil && held.Nlink > 0
}

// flock is flock(2), retried when a signal interrupts it.
func flock(fd, how int) error {
	for {
		if err := unix.Flock(fd, how); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// unlink removes the lock file while the lock is held (see lockGroup).
func (l *lock) unlink() error {
	if err := os.Remove(l.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove lock %s: %w", l.path, err)
	}
	return nil
}

// unlock releases the lock.
func (l *lock) unlock() error {
	if l == nil || l.fd < 0 {
		return nil
	}
	err := unix.Close(l.fd) // closing the last descriptor releases the flock
	l.fd = -1
	return err
}
