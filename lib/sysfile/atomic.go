package sysfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Atomic says how WriteAtomicAt writes; the zero value is the state directory's way.
type Atomic struct {
	// Mode is the new file's permission bits, set by fchmod after the create so the umask
	// takes none (the file is for readers running as other users). Zero: 0600, made by the
	// create alone, which a umask can only narrow (one system call less, on the hot path).
	Mode uint32
	// Owner, when set, is given the new file (fchown): a file replaced keeps its owner.
	Owner *Owner
	// Durable fsyncs the new file before the rename and the directory after it, so the new
	// file is what a crash leaves. Not for tmpfs or files that do not outlive a boot.
	Durable bool
	// TempName names the temporary file from the final name and a random draw; it must be a
	// name the caller's sweep of stale temporary files recognises. Nil is StateTemp.
	TempName func(name string, draw uint32) string
}

// Owner is a file's user and group.
type Owner struct{ UID, GID int }

// StateTemp is ".tmp-" + name + "-" + draw: the state directory's temporary files, which its
// sweep (state.RemoveStaleTemps) finds by the prefix, and which listings skip.
func StateTemp(name string, draw uint32) string {
	return ".tmp-" + name + "-" + strconv.FormatUint(uint64(draw), 10)
}

// HiddenTemp is "." + name + ".tmp-" + draw: hidden from a glob of the final names' pattern
// (*.json, *.end), and the final name is still readable in it (the snapshot directory's
// sweep parses it back).
func HiddenTemp(name string, draw uint32) string {
	return "." + name + ".tmp-" + strconv.FormatUint(uint64(draw), 10)
}

// WriteAtomic replaces path with b (mode 0600): a reader sees the old file or the new one,
// never half. The new file is written beside it under StateTemp's name and renamed over it.
func WriteAtomic(path string, b []byte) error {
	dir, base := filepath.Split(path)
	return WriteAtomicAt(unix.AT_FDCWD, dir, base, b, Atomic{})
}

// WriteAtomicAt replaces name in the directory dirfd with b: a reader sees the old file or
// the new one, never half. dir is the directory's path, for errors; with unix.AT_FDCWD it is
// also where name is. Nothing is written through a symbolic link: the temporary file is
// created exclusively (O_EXCL never follows a link, and concurrent writers of one name each
// get their own), and the rename replaces whatever entry has the name, a link included,
// rather than its target. On an error the temporary file is removed.
func WriteAtomicAt(dirfd int, dir, name string, b []byte, o Atomic) error {
	at := func(n string) string { return n }
	if dirfd == unix.AT_FDCWD {
		at = func(n string) string { return filepath.Join(dir, n) }
	}
	tempName := o.TempName
	if tempName == nil {
		tempName = StateTemp
	}
	mode := o.Mode
	if mode == 0 {
		mode = 0o600
	}
	var tmp string
	var fd int
	var err error
	for range 100 { // a name taken by a concurrent writer: draw another
		tmp = tempName(name, rand.Uint32())
		fd, err = openat(dirfd, at(tmp), filepath.Join(dir, tmp), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, mode)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	tmpPath := filepath.Join(dir, tmp)
	werr := fill(fd, tmpPath, b, o)
	if cerr := unix.Close(fd); werr == nil && cerr != nil {
		werr = &fs.PathError{Op: "close", Path: tmpPath, Err: cerr}
	}
	if werr == nil {
		if err := unix.Renameat(dirfd, at(tmp), dirfd, at(name)); err != nil {
			werr = &fs.PathError{Op: "rename", Path: filepath.Join(dir, name), Err: err}
		}
	}
	if werr != nil {
		_ = unix.Unlinkat(dirfd, at(tmp), 0)
		return werr
	}
	if o.Durable {
		return syncDir(dirfd, dir)
	}
	return nil
}

// fill sets the temporary file's mode and owner as o asks, writes b, and syncs it if o is
// Durable.
func fill(fd int, path string, b []byte, o Atomic) error {
	if o.Mode != 0 {
		if err := unix.Fchmod(fd, o.Mode); err != nil {
			return &fs.PathError{Op: "chmod", Path: path, Err: err}
		}
	}
	if o.Owner != nil {
		if err := unix.Fchown(fd, o.Owner.UID, o.Owner.GID); err != nil {
			return &fs.PathError{Op: "chown", Path: path, Err: err}
		}
	}
	if err := Write(fd, path, b); err != nil {
		return err
	}
	if o.Durable {
		if err := unix.Fsync(fd); err != nil {
			return &fs.PathError{Op: "fsync", Path: path, Err: err}
		}
	}
	return nil
}

// syncDir makes a rename in the directory durable: it is on disk only once the directory is.
func syncDir(dirfd int, dir string) error {
	fd := dirfd
	if dirfd == unix.AT_FDCWD {
		var err error
		if fd, err = Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0); err != nil {
			return fmt.Errorf("renamed into place but not durable: %w", err)
		}
		defer func() { _ = unix.Close(fd) }()
	}
	if err := unix.Fsync(fd); err != nil {
		return fmt.Errorf("renamed into place but not durable: %w", &fs.PathError{Op: "fsync", Path: dir, Err: err})
	}
	return nil
}

// openat is Open relative to dirfd; path names the file in errors.
func openat(dirfd int, name, path string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags|unix.O_CLOEXEC, perm)
		if err == nil {
			return fd, nil
		}
		if !errors.Is(err, unix.EINTR) {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
}
