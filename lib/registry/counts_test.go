package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Concurrent front ends never lose an increment: every goroutine opens its own file
// description, so they contend for the flock exactly as separate hook processes do.
func TestCountIsExactUnderConcurrency(t *testing.T) {
	t.Parallel()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 150
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if err := s.Count("hook.created"); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := s.Count("snapshot.begin"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if got["hook.created"] != workers*each || got["snapshot.begin"] != 1 || len(got) != 2 {
		t.Errorf("counts %v, want hook.created=%d snapshot.begin=1", got, workers*each)
	}
	// A person can read a count with cat.
	b, err := os.ReadFile(filepath.Join(s.Dir(), countsDir, "hook.created"))
	if err != nil || strings.TrimLeft(string(b), "0") != fmt.Sprintf("%d\n", workers*each) {
		t.Errorf("count file %q, %v", b, err)
	}
}

func TestCountRefusesBadNamesAndSurvivesBadFiles(t *testing.T) {
	t.Parallel()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", "../escape", "Hook.created", ".hidden", "a/b", strings.Repeat("x", 65)} {
		if err := s.Count(name); err == nil {
			t.Errorf("count %q accepted", name)
		}
	}
	path := filepath.Join(s.Dir(), countsDir, "hook.joined")
	if err := os.WriteFile(path, []byte("not a number"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := s.Counts()
	if err == nil || !strings.Contains(err.Error(), "hook.joined") {
		t.Errorf("a bad count file was not named: %v", err)
	}
	if _, ok := got["hook.joined"]; ok {
		t.Errorf("a bad count was reported: %v", got)
	}
	// Counting goes on from 1 rather than failing forever.
	if err := s.Count("hook.joined"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Counts(); err != nil || got["hook.joined"] != 1 {
		t.Errorf("after a bad file: %v, %v", got, err)
	}
}

func TestCountsOfAStateDirWithout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Counts(); err != nil || len(got) != 0 {
		t.Errorf("counts of an empty dir: %v, %v", got, err)
	}
}

func FuzzParseCount(f *testing.F) {
	for _, seed := range []string{"00000000000000000042\n", "0\n", "18446744073709551615\n", "18446744073709551616\n",
		"", "\n", "-1\n", "+1\n", " 1\n", "1 \n", "0x10\n", "1e3\n", "000000000000000000000001\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseCount(b)
		if err != nil {
			if v != 0 {
				t.Errorf("%q: error %v with value %d", b, err, v)
			}
			return
		}
		if len(b) > countWidth || strings.Trim(strings.TrimSuffix(string(b), "\n"), "0123456789") != "" {
			t.Errorf("%q accepted as %d", b, v)
		}
		// What Count writes for a value parses back to it.
		if back, err := ParseCount(formatCount(v)); err != nil || back != v {
			t.Errorf("%d: formatted %q parsed back as %d, %v", v, formatCount(v), back, err)
		}
	})
}
