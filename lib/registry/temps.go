package registry

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

// tempPrefix starts the name of every file written beside its final name and renamed over
// it (sysfile.WriteAtomic, BindContainer): a writer killed in between leaves one behind.
const tempPrefix = ".tmp-"

// RemoveStaleTemps removes the temporary files of writes that never finished, those last
// changed before before: a writer renames its file within microseconds, so one older than
// any write takes was left by a writer killed (kill -9, the OOM killer) between writing and
// renaming. Each is one small file or link, but on tmpfs nothing else would ever remove
// them. It is for the housekeeping sweep, never a container's own path.
func (s *Store) RemoveStaleTemps(before time.Time) (removed int, err error) {
	var errs []error
	for _, sub := range []string{".", groupsDir, containersDir, countsDir} {
		dir := filepath.Join(s.dir, sub)
		es, rerr := os.ReadDir(dir)
		if rerr != nil {
			if !errors.Is(rerr, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("stale temporary files: %w", rerr))
			}
			continue
		}
		for _, e := range es {
			if !strings.HasPrefix(e.Name(), tempPrefix) || e.IsDir() {
				continue
			}
			path := filepath.Join(dir, e.Name())
			var st unix.Stat_t
			// Lstat: a binding's temporary file is a symbolic link, and its own time counts.
			if unix.Lstat(path, &st) != nil || time.Unix(st.Mtim.Unix()).After(before) {
				continue
			}
			if uerr := unix.Unlink(path); uerr != nil && !errors.Is(uerr, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("remove %s: %w", path, uerr))
				continue
			}
			removed++
		}
	}
	return removed, errors.Join(errs...)
}
