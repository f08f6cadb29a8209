package registry

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/lib/sysfile"
)

// countsDir holds one small file per count: what the front ends did (outcomes by front end
// and action, snapshots written by kind), for the exporter to serve as counters. Hooks are
// short-lived processes, so a count cannot live in memory; a file per count needs no
// layout, no version and no rewrite of anything else, and the set of names is fixed by the
// code, so the directory stays bounded however many pods come and go.
const countsDir = "counts"

// countWidth is a count file's size: 20 decimal digits (all of a uint64) and a newline, so
// `cat` shows it and every update overwrites the same bytes in one write.
const countWidth = 21

// Count adds one to the named count. It takes the count file's flock for one read and one
// write (microseconds), so concurrent hooks never lose an increment; a holder that dies
// releases it.
func (s *Store) Count(name string) error {
	if !validCountName(name) {
		return fmt.Errorf("count %q: not a count name (lowercase letters, digits, '.', '-', '_')", name)
	}
	path := filepath.Join(s.dir, countsDir, name)
	fd, err := sysfile.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("count %s: %w", name, err)
	}
	defer func() { _ = unix.Close(fd) }()
	if err := flockWithin(fd, unix.LOCK_EX, countLockWait); err != nil {
		return fmt.Errorf("count %s: lock: %w", name, err)
	}
	b := make([]byte, countWidth)
	n, err := pread(fd, b)
	if err != nil {
		return fmt.Errorf("count %s: %w", name, err)
	}
	// A new file is empty; one that is not a count (written by hand) starts over rather
	// than stopping every later count.
	v, _ := ParseCount(b[:n])
	if _, err := unix.Pwrite(fd, formatCount(v+1), 0); err != nil {
		return fmt.Errorf("count %s: write: %w", name, err)
	}
	return nil
}

// pread reads the start of the file into b: a count file is written whole at offset 0.
func pread(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Pread(fd, b, 0)
		if !errors.Is(err, unix.EINTR) {
			if err != nil {
				return 0, fmt.Errorf("read: %w", err)
			}
			return n, nil
		}
	}
}

// Counts reads every count in the state dir. A file that is not a count is skipped and
// named in the error; the others are returned.
func (s *Store) Counts() (map[string]uint64, error) {
	dir := filepath.Join(s.dir, countsDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]uint64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read counts: %w", err)
	}
	out := make(map[string]uint64, len(entries))
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || !validCountName(e.Name()) {
			continue
		}
		v, err := readCount(filepath.Join(dir, e.Name()))
		if err != nil {
			errs = append(errs, fmt.Errorf("count %s: %w", e.Name(), err))
			continue
		}
		out[e.Name()] = v
	}
	return out, errors.Join(errs...)
}

func readCount(path string) (uint64, error) {
	fd, err := sysfile.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return 0, err
	}
	defer func() { _ = unix.Close(fd) }()
	// Shared: a reader never sees a write half done.
	if err := flockWithin(fd, unix.LOCK_SH, countLockWait); err != nil {
		return 0, err
	}
	b := make([]byte, countWidth+1)
	n, err := pread(fd, b)
	if err != nil {
		return 0, err
	}
	return ParseCount(b[:n])
}

// ParseCount parses a count file: decimal digits and a newline.
func ParseCount(b []byte) (uint64, error) {
	if len(b) > countWidth {
		return 0, fmt.Errorf("longer than %d bytes", countWidth)
	}
	s := string(bytes.TrimSuffix(b, []byte("\n")))
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a count", s)
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a count: %w", s, err)
	}
	return v, nil
}

func formatCount(v uint64) []byte {
	return fmt.Appendf(nil, "%020d\n", v)
}

func validCountName(name string) bool {
	if name == "" || len(name) > 64 || name[0] == '.' {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '.' && r != '-' && r != '_' {
			return false
		}
	}
	return true
}
