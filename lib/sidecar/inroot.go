package sidecar

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// readInRoot reads the file at path as the process whose root directory is root (a
// /proc/<pid>/root) would: its absolute symlinks resolve inside that root, not in ours
// (opening root+path would follow them into the sidecar's own files). It reads at most max
// bytes, and only a regular file: opening a FIFO would block the search forever.
func readInRoot(root, path string, max int64) ([]byte, error) {
	dirfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer func() { _ = unix.Close(dirfd) }()
	fd, err := unix.Openat2(dirfd, path, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ENOSYS) {
		// Linux before 5.6: no scoped resolution; at least no symlink in the last component.
		fd, err = unix.Openat(dirfd, "."+path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root + path, Err: err}
	}
	f := os.NewFile(uintptr(fd), root+path)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", f.Name(), fi.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is longer than %d bytes", f.Name(), max)
	}
	return b, nil
}
