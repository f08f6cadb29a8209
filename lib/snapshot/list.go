package snapshot

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// List returns what the names of the snapshot files in dir say, sorted by group, then life
// (version 1 files, with no life, first), then kind (.begin before .end): a consumer's index
// of lives to pair. It opens no snapshot. Temp files, symbolic links, directories and other
// names are left out. A missing dir holds none; a dir that is a symbolic link is refused
// (ErrSymlinkDir).
func List(dir string) ([]Name, error) {
	d, err := openDir(dir, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: list %s: %w", dir, err)
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("snapshot: list %s: %w", dir, err)
	}
	var out []Name
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if n, ok := ParseName(e.Name()); ok {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b Name) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), a.Life.Compare(b.Life), strings.Compare(kindOrder(a.Kind), kindOrder(b.Kind)))
	})
	return out, nil
}

func kindOrder(k Kind) string {
	if k == Begin {
		return "0"
	}
	return "1"
}
