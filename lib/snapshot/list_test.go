package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := func(n int) time.Time { return now.Add(-time.Duration(n) * time.Hour) }
	lived(t, dir, "b", h(5), h(4))
	lived(t, dir, "b", h(9), h(8))
	lived(t, dir, "b", h(1), time.Time{})
	lived(t, dir, "a", h(2), h(1))
	raw(t, dir, "b.end", "", now) // version 1
	raw(t, dir, "b.begin", "", now)
	for _, n := range []string{"README", "." + f("a", h(2), End) + ".tmp-1"} {
		raw(t, dir, n, "", now)
	}
	if err := os.Symlink("README", filepath.Join(dir, f("c", h(1), Begin))); err != nil {
		t.Fatal(err)
	}
	got, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Name{{"a", h(2), Begin}, {"a", h(2), End}, {"b", time.Time{}, Begin}, {"b", time.Time{}, End},
		{"b", h(9), Begin}, {"b", h(9), End}, {"b", h(5), Begin}, {"b", h(5), End}, {"b", h(1), Begin}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("List:\n got %v\nwant %v", got, want)
	}

	if got, err := List(filepath.Join(dir, "missing")); got != nil || err != nil {
		t.Errorf("missing dir: %v, %v", got, err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if got, err := List(link); got != nil || !errors.Is(err, ErrSymlinkDir) {
		t.Errorf("symlinked dir: %v, %v; want ErrSymlinkDir", got, err)
	}
}
