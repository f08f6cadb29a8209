package registry

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ownPrivate checks a state directory that may have existed before this process: root writes
// records and locks there, so nobody else may change them. One another user owns is refused
// (its owner could rewrite records and unlink locks; whether to chown it is the admin's
// call); one that group or others may write to is made 0700, what Open makes, since that is
// never wanted, unless it is sticky: a shared directory (/tmp) is refused, never changed. One
// readable by others is kept as it is: an admin may let a reader in.
func ownPrivate(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("state dir %s: %w", dir, err)
	}
	defer func() { _ = unix.Close(fd) }()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("state dir %s: %w", dir, err)
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return fmt.Errorf("state dir %s is owned by uid %d, not this process's uid %d: refused (its owner could change records and locks); chown it, or set stateDir elsewhere", dir, st.Uid, uid)
	}
	if st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX != 0 {
		// Sticky and writable by others: a shared directory (/tmp, /dev/shm), never made
		// private under its other users.
		return fmt.Errorf("state dir %s is a shared directory (mode %#o): refused; give stateDir a directory of its own", dir, st.Mode&0o7777)
	}
	if st.Mode&0o022 != 0 {
		if err := unix.Fchmod(fd, 0o700); err != nil {
			return fmt.Errorf("state dir %s is writable by others (mode %#o) and could not be made private: %w", dir, st.Mode&0o7777, err)
		}
	}
	return nil
}
