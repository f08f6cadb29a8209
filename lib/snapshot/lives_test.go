package snapshot

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// contents lists what the snapshots in dir say: "kind@time" of each, sorted.
func contents(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, name := range names(t, dir) {
		s, err := ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(s.Kind)+"@"+s.Time.Format(time.RFC3339))
	}
	slices.Sort(out)
	return out
}

// A pod's group is removed and, after the retention window, made again under the same name
// (same pod UID). Each life keeps its own snapshots, and pruning the first life leaves the
// second one's .begin.
func TestPruneTwoLivesOfOneGroup(t *testing.T) {
	t.Parallel()
	at := func(k Kind, tm time.Time) string { return string(k) + "@" + tm.Format(time.RFC3339) }
	life1 := now.Add(-10 * 24 * time.Hour)
	for name, life2 := range map[string]time.Time{
		"second life young":             now.Add(-time.Hour),
		"second life older than maxAge": now.Add(-3 * 24 * time.Hour), // a long-lived pod
	} {
		dir := t.TempDir()
		lived(t, dir, uid, life1, life1.Add(time.Hour))
		lived(t, dir, uid, life2, time.Time{})
		if got, want := contents(t, dir), []string{at(Begin, life1), at(Begin, life2), at(End, life1.Add(time.Hour))}; !slices.Equal(got, want) {
			t.Errorf("%s: before prune, the snapshots say\n %q\nwant both lives'\n %q", name, got, want)
		}
		removed, err := Prune(dir, PrunePolicy{MaxAge: 2 * 24 * time.Hour, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := contents(t, dir), []string{at(Begin, life2)}; !slices.Equal(got, want) || removed != 2 {
			t.Errorf("%s: prune removed %d; the snapshots left say\n %q\nwant the first life's pair gone and the live life's .begin kept\n %q", name, removed, got, want)
		}
	}
}
