package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ErrSymlinkDir: the snapshot directory is a symbolic link. It is not followed: the hook
// runs as root, and a link planted at that name would make it write and delete files
// wherever the link points.
var ErrSymlinkDir = errors.New("is a symbolic link; not following it")

// openDir opens the snapshot directory itself, never what a symbolic link points to: it walks
// the path from its first component, each opened with O_NOFOLLOW relative to the one before,
// so a link planted at the dir's name or at any parent (a writable /var/lib/x, say) is
// refused, not followed. Every later step works relative to the open directory (the *at
// calls), so a name swapped for a link meanwhile changes nothing. A real path that goes
// through a link (/var/run on most distributions) must be named by its target. With create,
// missing directories are made, the last one mode 0755 whatever the umask: consumers in other
// containers run as other users.
func openDir(dir string, create bool) (*os.File, error) {
	clean := filepath.Clean(dir)
	start := "."
	if filepath.IsAbs(clean) {
		start = "/"
	}
	fd, err := unix.Open(start, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: start, Err: err}
	}
	parts := strings.Split(strings.TrimPrefix(clean, "/"), "/")
	if clean == "/" || clean == "." {
		parts = nil
	}
	made := false
	for i, part := range parts {
		at := filepath.Join(start, filepath.Join(parts[:i+1]...))
		if create {
			switch err := unix.Mkdirat(fd, part, 0o755); {
			case err == nil:
				made = i == len(parts)-1
			case !errors.Is(err, unix.EEXIST):
				_ = unix.Close(fd)
				return nil, &fs.PathError{Op: "mkdir", Path: at, Err: err}
			}
		}
		next, err := unix.Openat(fd, part, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			// The open refused already; this only tells why (Linux says ENOTDIR for a link
			// with O_DIRECTORY, and ELOOP without).
			var st unix.Stat_t
			if unix.Fstatat(fd, part, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				_ = unix.Close(fd)
				if at == clean {
					return nil, fmt.Errorf("dir %s %w", dir, ErrSymlinkDir)
				}
				return nil, fmt.Errorf("dir %s: %s %w (name the directory by its real path)", dir, at, ErrSymlinkDir)
			}
		}
		_ = unix.Close(fd)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: at, Err: err}
		}
		fd = next
	}
	d := os.NewFile(uintptr(fd), dir)
	if made {
		if err := d.Chmod(0o755); err != nil {
			_ = d.Close()
			return nil, err
		}
	}
	return d, nil
}

// mtime is the modification time of name in d, not following a link; ok is false when it
// cannot be had (gone since the listing).
func mtime(dfd int, name string) (time.Time, bool) {
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return time.Time{}, false
	}
	return time.Unix(st.Mtim.Unix()), true
}
