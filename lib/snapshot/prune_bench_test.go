package snapshot

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// BenchmarkPrune prunes a dir of 5000 snapshots with nothing to remove, against a plain
// listing of the same dir in the same loop: the ratio is what Prune costs against reading the
// directory, which stays small only while Prune works from names and mtimes and never opens
// or decodes a file.
func BenchmarkPrune(b *testing.B) {
	const files = 5000
	dir := b.TempDir()
	data, err := encode(sample(uid, End))
	if err != nil {
		b.Fatal(err)
	}
	// Prune does not read the content; a real one keeps the page cache honest all the same.
	// 2000 finished lives and 1000 going on, all young.
	for i := range files * 3 / 5 {
		group := "pod-" + strconv.Itoa(i)
		life := now.Add(-time.Duration(i+60) * time.Second)
		kinds := []Kind{Begin, End}
		if i%3 == 2 {
			kinds = kinds[:1]
		}
		for _, k := range kinds {
			raw(b, dir, FileName(group, life, k), string(data), life)
		}
	}
	if n := len(names(b, dir)); n != files {
		b.Fatalf("%d files, want %d", n, files)
	}
	live := func(string, time.Time) bool { return true }
	for name, p := range map[string]PrunePolicy{
		// The usual call: every life young, fewer lives than the count keeps. No file is
		// even stat'ed.
		"young": {MaxAge: 24 * time.Hour, MaxCount: files, Now: now, Live: live},
		// More lives than the count, though no more finished ones: every .end's mtime is
		// needed to order them, and Live is asked about every lone .begin.
		"ordered": {MaxAge: 24 * time.Hour, MaxCount: files * 2 / 5, Now: now, Live: live},
	} {
		b.Run(name, func(b *testing.B) {
			var listing, pruning time.Duration
			iterations := 0
			for b.Loop() {
				start := time.Now()
				if _, err := os.ReadDir(dir); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				removed, err := Prune(dir, p)
				listing, pruning = listing+mid.Sub(start), pruning+time.Since(mid)
				if err != nil || removed != 0 {
					b.Fatalf("removed %d, %v", removed, err)
				}
				iterations++
			}
			b.ReportMetric(float64(pruning)/float64(listing), "prune/readdir")
			b.ReportMetric(float64(pruning.Nanoseconds())/float64(iterations*files), "prune-ns/file")
		})
	}
}
