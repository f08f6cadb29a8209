// Package sysfile opens, reads and writes the small files on resctrl-mon's hot path (the
// state directory on tmpfs, /proc) with plain system calls.
//
// os.OpenFile on Linux offers every file it opens to the runtime's network poller: it sets
// the descriptor non-blocking, tries epoll_ctl (which refuses a regular file), and sets it
// back, five system calls per open that do nothing for a file. A container's placement (the
// hook's createRuntime, the NRI adapter's StartContainer) opens a dozen such files, and the
// library's own work there is mostly system calls (what this saves: docs/benchmarks.md, the
// NRI adapter).
// Errors are *fs.PathError, as os gives them: errors.Is(err, fs.ErrNotExist) works.
package sysfile

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// Open is open(2), O_CLOEXEC always, retried when a signal interrupts it.
func Open(path string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Open(path, flags|unix.O_CLOEXEC, perm)
		if err == nil {
			return fd, nil
		}
		if !errors.Is(err, unix.EINTR) {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
}

// ReadFile reads a whole file of at most limit bytes; a longer one is an error (outside
// input is never read without a bound). flags are added to O_RDONLY (O_NOFOLLOW).
//
// It is for files that are whole at every read: the registry's (replaced by rename, never
// written in place) and /proc's single-record files (stat, status, cgroup: the kernel makes
// the whole text at each read). A read that returns less than it asked for is then the end,
// and no second read is made to see it (one system call less per file, on every
// placement). Not for pipes, or files written while they are read.
func ReadFile(path string, flags, limit int) ([]byte, error) {
	fd, err := Open(path, unix.O_RDONLY|flags, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = unix.Close(fd) }()
	// Most files here are well under a page: one read.
	buf := make([]byte, 0, min(limit+1, 4096))
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				return nil, tooLong(path, limit)
			}
			buf = append(buf, 0)[:len(buf)]
		}
		want := cap(buf) - len(buf)
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		buf = buf[:len(buf)+n]
		if n < want {
			if len(buf) > limit {
				return nil, tooLong(path, limit)
			}
			return buf, nil
		}
	}
}

// ErrTooLong: the file is longer than ReadFile's limit.
var ErrTooLong = errors.New("longer than the limit")

func tooLong(path string, limit int) error {
	return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w of %d bytes", ErrTooLong, limit)}
}

// Write writes all of b to fd.
func Write(fd int, path string, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "write", Path: path, Err: err}
		}
		b = b[n:]
	}
	return nil
}
