package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

var now = t0.Add(30 * 24 * time.Hour)

// put writes group's kind snapshot taken at t, with an mtime of now so that only the time
// inside the file can make it old.
func put(t *testing.T, dir, group string, kind Kind, at time.Time) {
	t.Helper()
	s := sample(group, kind)
	s.Time = at
	path, err := Write(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, now, now); err != nil {
		t.Fatal(err)
	}
}

// raw writes a file that is not necessarily a snapshot, with mtime at.
func raw(t *testing.T, dir, name, content string, at time.Time) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func expect(t *testing.T, dir string, want ...string) {
	t.Helper()
	slices.Sort(want)
	got := names(t, dir)
	if !slices.Equal(got, want) {
		t.Errorf("dir holds\n %q\nwant\n %q", got, want)
	}
	// The promise to consumers: no .end without its .begin.
	for _, n := range got {
		fi, err := os.Lstat(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if g, kind, ok := parseName(n); ok && kind == End && fi.Mode().IsRegular() && !slices.Contains(got, g+".begin") {
			t.Errorf("%s left without %s.begin", n, g)
		}
	}
}

func TestPruneByAge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	put(t, dir, "old", Begin, now.Add(-10*24*time.Hour))
	put(t, dir, "old", End, now.Add(-9*24*time.Hour))
	put(t, dir, "old-alive", Begin, now.Add(-3*24*time.Hour))
	put(t, dir, "recent", Begin, now.Add(-time.Hour))
	// Began long ago, ended recently: the pair is as young as its .end.
	put(t, dir, "long", Begin, now.Add(-20*24*time.Hour))
	put(t, dir, "long", End, now.Add(-time.Minute))

	removed, err := Prune(dir, 2*24*time.Hour, 0, now)
	if err != nil {
		t.Fatal(err)
	}
	// old-alive has no .end: its group is alive, so its .begin stays however old.
	if removed != 2 {
		t.Errorf("removed %d, want 2", removed)
	}
	expect(t, dir, "long.begin", "long.end", "old-alive.begin", "recent.begin")
}

func TestPruneByCountKeepsPairs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := func(n int) time.Time { return now.Add(-time.Duration(n) * time.Hour) }
	put(t, dir, "a", Begin, h(50))
	put(t, dir, "a", End, h(1)) // newest unit, though its .begin is the oldest file
	put(t, dir, "b", Begin, h(2))
	put(t, dir, "c", Begin, h(10))
	put(t, dir, "c", End, h(3))
	put(t, dir, "d", Begin, h(4))
	put(t, dir, "d", End, h(4))
	put(t, dir, "e", Begin, h(5))

	// Only complete pairs count and go: a, c, d; the lone .begins of live b and e stay.
	removed, err := Prune(dir, 0, 2, now)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 2 {
		t.Errorf("removed %d, want 2 (d's pair)", removed)
	}
	expect(t, dir, "a.begin", "a.end", "b.begin", "c.begin", "c.end", "e.begin")

	// Age and count together: age takes c.
	removed, err = Prune(dir, 150*time.Minute, 1, now)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 2 {
		t.Errorf("removed %d, want 2", removed)
	}
	expect(t, dir, "a.begin", "a.end", "b.begin", "e.begin")

	if removed, err := Prune(dir, 0, 1, now); err != nil || removed != 0 {
		t.Errorf("within limits: removed %d, %v", removed, err)
	}
}

func TestPruneLeavesOthersAlone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := now.Add(-365 * 24 * time.Hour)
	put(t, dir, uid, Begin, old)
	put(t, dir, uid, End, old)
	others := []string{"README", "x.json", uid + ".end.bak", uid + ".ended", ".hidden.end", ".end", "..end", ".begin",
		"." + uid + ".end.tmp-", "." + uid + ".end.tmp-12a", uid + ".end.tmp-12", ".a.tmp-1"}
	for _, n := range others {
		raw(t, dir, n, "not a snapshot", old)
	}
	if err := os.Mkdir(filepath.Join(dir, "d.end"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("README", filepath.Join(dir, "l.end")); err != nil {
		t.Fatal(err)
	}
	// Temp files of Write: a young one may be a Write in progress, an old one is a crash's.
	young, stale := "."+uid+".end.tmp-123", "."+uid+".begin.tmp-456"
	raw(t, dir, young, "{", now.Add(-30*time.Second))
	raw(t, dir, stale, "{", now.Add(-2*time.Minute))

	removed, err := Prune(dir, time.Nanosecond, 1, now)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 3 {
		t.Errorf("removed %d, want 3 (the pair and the stale temp file)", removed)
	}
	expect(t, dir, append(others, "d.end", "l.end", young)...)
}

func TestPruneUnreadableByMtime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old, recent := now.Add(-48*time.Hour), now.Add(-time.Hour)
	raw(t, dir, "garbage-old.end", "garbage", old)
	raw(t, dir, "garbage-recent.begin", "{", recent)
	// A whole snapshot under another group's name is unreadable as that group's.
	data, err := encode(sample("other", End))
	if err != nil {
		t.Fatal(err)
	}
	raw(t, dir, "misnamed.end", string(data), old)
	// Readable: the time inside counts, not the old mtime.
	put(t, dir, "good", Begin, recent)
	if err := os.Chtimes(filepath.Join(dir, "good.begin"), old, old); err != nil {
		t.Fatal(err)
	}

	removed, err := Prune(dir, 24*time.Hour, 0, now)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 2 {
		t.Errorf("removed %d, want 2", removed)
	}
	expect(t, dir, "garbage-recent.begin", "good.begin")
}

func TestPruneNoLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	put(t, dir, "a", Begin, t0)
	put(t, dir, "a", End, t0)
	stale := ".a.end.tmp-1"
	raw(t, dir, stale, "", t0)
	for _, tc := range []struct {
		maxAge   time.Duration
		maxCount int
		removed  int
	}{
		{0, 0, 1}, // no limit on snapshots; a crashed Write's leftovers still go
		{-1, -1, 0},
	} {
		removed, err := Prune(dir, tc.maxAge, tc.maxCount, now)
		if err != nil {
			t.Fatal(err)
		}
		if removed != tc.removed {
			t.Errorf("limits %v, %d: removed %d, want %d", tc.maxAge, tc.maxCount, removed, tc.removed)
		}
		expect(t, dir, "a.begin", "a.end")
	}
}

func TestPruneMissingDir(t *testing.T) {
	t.Parallel()
	removed, err := Prune(filepath.Join(t.TempDir(), "none"), time.Hour, 1, now)
	if removed != 0 || err != nil {
		t.Errorf("missing dir: removed %d, %v", removed, err)
	}
	file := filepath.Join(t.TempDir(), "file")
	raw(t, filepath.Dir(file), "file", "", now)
	if _, err := Prune(file, time.Hour, 1, now); !errors.Is(err, syscall.ENOTDIR) || !strings.Contains(err.Error(), file) {
		t.Errorf("dir is a file: error %v, want ENOTDIR naming %s", err, file)
	}
}

// As root no permission makes a remove fail, so inject the failure.
func TestPruneRemoveFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, g := range []string{"a", "b", "c"} {
		put(t, dir, g, Begin, t0)
		put(t, dir, g, End, t0)
	}
	boom := errors.New("boom")
	remove := func(path string) error {
		switch filepath.Base(path) {
		case "a.end", "c.begin":
			return &os.PathError{Op: "remove", Path: path, Err: boom}
		}
		return os.Remove(path)
	}
	removed, err := prune(dir, time.Hour, 0, now, remove)
	if removed != 3 {
		t.Errorf("removed %d, want 3 (b's pair, c's .end)", removed)
	}
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want the failures joined", err)
	}
	for _, n := range []string{"a.end", "c.begin"} {
		if !strings.Contains(err.Error(), filepath.Join(dir, n)) {
			t.Errorf("error %q does not name %s", err, n)
		}
	}
	// a's .end could not go, so its .begin stayed: still a consistent pair.
	expect(t, dir, "a.begin", "a.end", "c.begin")
}
