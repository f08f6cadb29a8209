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

	"golang.org/x/sys/unix"
)

var now = t0.Add(30 * 24 * time.Hour)

// put writes group's kind snapshot of the life begun at life, taken at `at`, with an mtime
// of `at` (as Write leaves it). It returns the file name.
func put(t *testing.T, dir, group string, life time.Time, kind Kind, at time.Time) string {
	t.Helper()
	s := sample(group, kind)
	s.Life, s.Time = life, at
	path, err := Write(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
	return filepath.Base(path)
}

// lived writes the .begin of a life begun at life and, unless ended is zero, its .end.
func lived(t *testing.T, dir, group string, life, ended time.Time) {
	t.Helper()
	put(t, dir, group, life, Begin, life)
	if !ended.IsZero() {
		put(t, dir, group, life, End, ended)
	}
}

// raw writes a file that is not necessarily a snapshot, with mtime at.
func raw(t testing.TB, dir, name, content string, at time.Time) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// names lists the files in dir.
func names(t testing.TB, dir string) []string {
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
	// A copy: parallel subtests may pass the same table slice.
	want = slices.Sorted(slices.Values(want))
	got := names(t, dir)
	if !slices.Equal(got, want) {
		t.Errorf("dir holds\n %q\nwant\n %q", got, want)
	}
	// The promise to consumers: no .end without the .begin of its life (for a life going on
	// at the upgrade from version 1, the version 1 .begin).
	for _, n := range got {
		fi, err := os.Lstat(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		p, ok := ParseName(n)
		if !ok || p.Kind != End || !fi.Mode().IsRegular() {
			continue
		}
		if !slices.Contains(got, FileName(p.Group, p.Life, Begin)) && !slices.Contains(got, FileName(p.Group, time.Time{}, Begin)) {
			t.Errorf("%s left without its .begin", n)
		}
	}
}

// f is the file name of group's kind snapshot of the life begun at life.
func f(group string, life time.Time, kind Kind) string { return FileName(group, life, kind) }

func days(n float64) time.Time { return now.Add(-time.Duration(n * 24 * float64(time.Hour))) }

func TestPruneByAge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lived(t, dir, "old", days(10), days(9))
	lived(t, dir, "old-alive", days(3), time.Time{})
	lived(t, dir, "recent", days(0.1), time.Time{})
	// Began long ago, ended recently: the pair is as young as its .end.
	lived(t, dir, "long", days(20), now.Add(-time.Minute))

	removed, err := Prune(dir, PrunePolicy{MaxAge: 2 * 24 * time.Hour, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	// old-alive has no .end and no Live says otherwise: its group is alive, so its .begin
	// stays however old.
	if removed != 2 {
		t.Errorf("removed %d, want 2", removed)
	}
	expect(t, dir, f("long", days(20), Begin), f("long", days(20), End), f("old-alive", days(3), Begin), f("recent", days(0.1), Begin))
}

func TestPruneByCountKeepsPairs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := func(n int) time.Time { return now.Add(-time.Duration(n) * time.Hour) }
	lived(t, dir, "a", h(50), h(1)) // newest unit, though its .begin is the oldest file
	lived(t, dir, "b", h(2), time.Time{})
	lived(t, dir, "c", h(10), h(3))
	lived(t, dir, "d", h(4), h(4))
	lived(t, dir, "e", h(5), time.Time{})

	// Only finished lives count and go: a, c, d; the lone .begins of live b and e stay.
	removed, err := Prune(dir, PrunePolicy{MaxCount: 2, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if removed != 2 {
		t.Errorf("removed %d, want 2 (d's pair)", removed)
	}
	expect(t, dir, f("a", h(50), Begin), f("a", h(50), End), f("b", h(2), Begin), f("c", h(10), Begin), f("c", h(10), End), f("e", h(5), Begin))

	// Age and count together: age takes c.
	removed, err = Prune(dir, PrunePolicy{MaxAge: 150 * time.Minute, MaxCount: 1, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if removed != 2 {
		t.Errorf("removed %d, want 2", removed)
	}
	expect(t, dir, f("a", h(50), Begin), f("a", h(50), End), f("b", h(2), Begin), f("e", h(5), Begin))

	if removed, err := Prune(dir, PrunePolicy{MaxCount: 1, Now: now}); err != nil || removed != 0 {
		t.Errorf("within limits: removed %d, %v", removed, err)
	}
}

// A lone .begin is of a live life unless Live says the life is over (its group vanished and
// no .end will come): then it is a finished unit like a pair, by age and by count. Live is
// asked only when its answer can change what goes.
func TestPruneLive(t *testing.T) {
	t.Parallel()
	h := func(n int) time.Time { return now.Add(-time.Duration(n) * time.Hour) }
	setup := func(t *testing.T) string {
		dir := t.TempDir()
		lived(t, dir, "alive-old", h(100), time.Time{})
		lived(t, dir, "gone-old", h(90), time.Time{})
		lived(t, dir, "gone-new", h(1), time.Time{})
		lived(t, dir, "pair", h(5), h(2))
		// Another life of gone-new's group, ended: a unit of its own.
		lived(t, dir, "gone-new", h(80), h(70))
		return dir
	}
	dead := map[string]bool{"gone-old": true, "gone-new": true}
	all := []string{f("alive-old", h(100), Begin), f("gone-old", h(90), Begin), f("gone-new", h(1), Begin),
		f("pair", h(5), Begin), f("pair", h(5), End), f("gone-new", h(80), Begin), f("gone-new", h(80), End)}
	without := func(drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(all), func(n string) bool { return slices.Contains(drop, n) })
	}
	for name, tc := range map[string]struct {
		maxAge   time.Duration
		maxCount int
		nilLive  bool
		asked    []string // group@hours-ago
		want     []string
	}{
		"by age": {maxAge: 24 * time.Hour, asked: []string{"alive-old@100", "gone-old@90"},
			want: without(f("gone-old", h(90), Begin), f("gone-new", h(80), Begin), f("gone-new", h(80), End))},
		// Finished, newest first: gone-new@1, pair, gone-new@80, gone-old.
		"by count": {maxCount: 2, asked: []string{"alive-old@100", "gone-old@90", "gone-new@1"},
			want: without(f("gone-old", h(90), Begin), f("gone-new", h(80), Begin), f("gone-new", h(80), End))},
		"by count 1": {maxCount: 1, asked: []string{"alive-old@100", "gone-old@90", "gone-new@1"},
			want: without(f("gone-old", h(90), Begin), f("gone-new", h(80), Begin), f("gone-new", h(80), End), f("pair", h(5), Begin), f("pair", h(5), End))},
		// Five lives: a count of 5 cannot prune any, so Live need not be asked; of 4 can, and
		// then must know which lone .begins are finished (here just 4 lives are).
		"within limits":         {maxAge: 1000 * time.Hour, maxCount: 10, want: all},
		"count 5":               {maxCount: 5, want: all},
		"count 4":               {maxCount: 4, asked: []string{"alive-old@100", "gone-old@90", "gone-new@1"}, want: all},
		"nothing old, no count": {maxAge: 1000 * time.Hour, want: all},
		// Every lone .begin is alive; of the pairs the newest stays.
		"nil Live": {maxAge: 24 * time.Hour, maxCount: 1, nilLive: true, want: without(f("gone-new", h(80), Begin), f("gone-new", h(80), End))},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := setup(t)
			var asked []string
			p := PrunePolicy{MaxAge: tc.maxAge, MaxCount: tc.maxCount, Now: now, Live: func(group string, life time.Time) bool {
				asked = append(asked, group+"@"+now.Sub(life).Truncate(time.Hour).String())
				return !dead[group]
			}}
			if tc.nilLive {
				p.Live = nil
			}
			removed, err := Prune(dir, p)
			if err != nil {
				t.Fatal(err)
			}
			if want := len(all) - len(tc.want); removed != want {
				t.Errorf("removed %d, want %d", removed, want)
			}
			expect(t, dir, tc.want...)
			var want []string
			for _, a := range tc.asked {
				g, hours, _ := strings.Cut(a, "@")
				want = append(want, g+"@"+hours+"h0m0s")
			}
			slices.Sort(asked)
			slices.Sort(want)
			if !slices.Equal(asked, want) {
				t.Errorf("Live asked about %q, want %q", asked, want)
			}
		})
	}
}

// Version 1 files (no life in the name) are units of their own, aged by mtime, and Live is
// asked about them with a zero life.
func TestPruneLegacy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v1 := func(group string, kind Kind, at time.Time) string {
		name := group + "." + string(kind)
		raw(t, dir, name, `{"version":1,"kind":"`+string(kind)+`","time":"2025-06-01T12:34:56Z","group":"`+group+`","path":"mon_groups/`+group+`","readings":[]}`, at)
		if _, err := ReadFile(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		return name
	}
	v1(uid, Begin, days(10))
	v1(uid, End, days(9))
	keep := []string{v1("young", Begin, days(5)), v1("young", End, days(1)), v1("alive", Begin, days(10))}
	v1("gone", Begin, days(10))
	// The group's life after the upgrade, alive.
	lived(t, dir, uid, days(8), time.Time{})
	keep = append(keep, f(uid, days(8), Begin))
	var asked []string
	removed, err := Prune(dir, PrunePolicy{MaxAge: 2 * 24 * time.Hour, Now: now, Live: func(group string, life time.Time) bool {
		asked = append(asked, group+"@"+life.String())
		return group != "gone"
	}})
	if err != nil {
		t.Fatal(err)
	}
	if removed != 3 {
		t.Errorf("removed %d, want 3", removed)
	}
	expect(t, dir, keep...)
	slices.Sort(asked)
	zero := "@" + time.Time{}.String()
	want := []string{"alive" + zero, "gone" + zero, uid + "@" + days(8).String()}
	slices.Sort(want)
	if !slices.Equal(asked, want) {
		t.Errorf("Live asked about %q, want %q", asked, want)
	}
}

// A life going on at the upgrade from version 1 began with <group>.begin and ends with
// <group>.<life>.end: the two are one unit.
func TestPruneAcrossUpgrade(t *testing.T) {
	t.Parallel()
	life := days(10).Add(-time.Second) // recorded just before its .begin was written
	setup := func(t *testing.T) string {
		dir := t.TempDir()
		raw(t, dir, uid+".begin", "", days(10))
		put(t, dir, uid, life, End, days(5))
		// A later life of the same group, going on.
		lived(t, dir, uid, days(1), time.Time{})
		// An earlier life, begun and ended before the upgrade, and another group's lone
		// .end of a life begun after its lone version 1 .begin: neither is the other's.
		raw(t, dir, "other.begin", "", days(20))
		put(t, dir, "other", days(19), End, days(18))
		return dir
	}
	exact := func(group string, l time.Time) bool { return group == uid && l.Equal(days(1)) }
	for name, tc := range map[string]struct {
		maxAge time.Duration
		want   []string
	}{
		"young": {6 * 24 * time.Hour, []string{uid + ".begin", f(uid, life, End), f(uid, days(1), Begin)}},
		"old":   {4 * 24 * time.Hour, []string{f(uid, days(1), Begin)}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := setup(t)
			if _, err := Prune(dir, PrunePolicy{MaxAge: tc.maxAge, Now: now, Live: exact}); err != nil {
				t.Fatal(err)
			}
			expect(t, dir, tc.want...)
		})
	}
}

func TestPruneLeavesOthersAlone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := now.Add(-365 * 24 * time.Hour)
	lived(t, dir, uid, old, old)
	v2 := f(uid, old, End)
	others := []string{"README", "x.json", uid + ".end.bak", uid + ".ended", ".hidden.end", ".end", "..end", ".begin",
		"." + uid + ".end.tmp-", "." + uid + ".end.tmp-12a", uid + ".end.tmp-12", ".a.tmp-1",
		v2 + ".bak", strings.TrimSuffix(v2, ".end") + ".middle", strings.TrimSuffix(v2, ".end"), "." + v2, "." + v2 + ".tmp-",
		v2 + ".tmp-1"}
	for _, n := range others {
		raw(t, dir, n, "not a snapshot", old)
	}
	for _, n := range []string{"d.end", f("d", old, End)} {
		if err := os.Mkdir(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"l.end", f("l", old, End), f("l", old, Begin)} {
		if err := os.Symlink("README", filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	// Temp files of Write: a young one may be a Write in progress, an old one is a crash's.
	young, stale, staleV1 := "."+v2+".tmp-123", "."+f(uid, old, Begin)+".tmp-456", "."+uid+".begin.tmp-789"
	raw(t, dir, young, "{", now.Add(-30*time.Second))
	raw(t, dir, stale, "{", now.Add(-2*time.Minute))
	raw(t, dir, staleV1, "{", now.Add(-2*time.Minute))

	removed, err := Prune(dir, PrunePolicy{MaxAge: time.Nanosecond, MaxCount: 1, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if removed != 4 {
		t.Errorf("removed %d, want 4 (the pair and the stale temp files)", removed)
	}
	expect(t, dir, append(others, "d.end", f("d", old, End), "l.end", f("l", old, End), f("l", old, Begin), young)...)
}

// Prune never opens a snapshot: ages come from the names and mtimes, whatever the files hold.
func TestPruneByNameNotContent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old, recent := now.Add(-48*time.Hour), now.Add(-time.Hour)
	// Garbage under snapshot names is pruned like snapshots.
	raw(t, dir, f("garbage-old", old, Begin), "garbage", now)
	raw(t, dir, f("garbage-old", old, End), "{", old)
	raw(t, dir, f("garbage-recent", old, Begin), "{", old)
	raw(t, dir, f("garbage-recent", old, End), "{", recent)
	// An .end's content says it is recent; its mtime says old: the mtime counts.
	put(t, dir, "good", old, Begin, old)
	put(t, dir, "good", old, End, recent)
	if err := os.Chtimes(filepath.Join(dir, f("good", old, End)), old, old); err != nil {
		t.Fatal(err)
	}
	// A .begin's name says it is recent, its mtime old: the name counts (with nil Live it is
	// alive anyway, so pair it).
	put(t, dir, "young", recent, Begin, old)
	raw(t, dir, f("young", recent, End), "", old)

	removed, err := Prune(dir, PrunePolicy{MaxAge: 24 * time.Hour, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if removed != 4 {
		t.Errorf("removed %d, want 4", removed)
	}
	expect(t, dir, f("garbage-recent", old, Begin), f("garbage-recent", old, End), f("young", recent, Begin), f("young", recent, End))
}

func TestPruneNoLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lived(t, dir, "a", t0, t0)
	raw(t, dir, "."+f("a", t0, End)+".tmp-1", "", t0)
	for _, tc := range []struct {
		p       PrunePolicy
		removed int
	}{
		{PrunePolicy{Now: now}, 1}, // no limit on snapshots; a crashed Write's leftovers still go
		{PrunePolicy{MaxAge: -1, MaxCount: -1, Now: now, Live: func(string, time.Time) bool { t.Error("Live asked"); return true }}, 0},
	} {
		removed, err := Prune(dir, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if removed != tc.removed {
			t.Errorf("policy %+v: removed %d, want %d", tc.p, removed, tc.removed)
		}
		expect(t, dir, f("a", t0, Begin), f("a", t0, End))
	}
}

func TestPruneMissingDir(t *testing.T) {
	t.Parallel()
	p := PrunePolicy{MaxAge: time.Hour, MaxCount: 1, Now: now}
	removed, err := Prune(filepath.Join(t.TempDir(), "none"), p)
	if removed != 0 || err != nil {
		t.Errorf("missing dir: removed %d, %v", removed, err)
	}
	file := filepath.Join(t.TempDir(), "file")
	raw(t, filepath.Dir(file), "file", "", now)
	if _, err := Prune(file, p); !errors.Is(err, syscall.ENOTDIR) || !strings.Contains(err.Error(), file) {
		t.Errorf("dir is a file: error %v, want ENOTDIR naming %s", err, file)
	}
}

// As root no permission makes a remove fail, so inject the failure.
func TestPruneRemoveFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, g := range []string{"a", "b", "c"} {
		lived(t, dir, g, t0, t0)
	}
	boom := errors.New("boom")
	unlink := func(dfd int, name string) error {
		switch name {
		case f("a", t0, End), f("c", t0, Begin):
			return boom
		}
		return unix.Unlinkat(dfd, name, 0)
	}
	removed, err := prune(dir, PrunePolicy{MaxAge: time.Hour, Now: now}, unlink)
	if removed != 3 {
		t.Errorf("removed %d, want 3 (b's pair, c's .end)", removed)
	}
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want the failures joined", err)
	}
	for _, n := range []string{f("a", t0, End), f("c", t0, Begin)} {
		if !strings.Contains(err.Error(), filepath.Join(dir, n)) {
			t.Errorf("error %q does not name %s", err, n)
		}
	}
	// a's .end could not go, so its .begin stayed: still a consistent pair.
	expect(t, dir, f("a", t0, Begin), f("a", t0, End), f("c", t0, Begin))
}
