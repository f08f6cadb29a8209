package registry

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Writers that find the failures log full at the same time rotate it once: the full log
// becomes failures.jsonl.1 and no writer renames the fresh log over it. Every record of the
// full log and every new one is still there, in rounds of writers released together, each
// writing through a descriptor of its own as hook processes do.
func TestFailuresRotationConcurrent(t *testing.T) {
	t.Parallel()
	for _, writers := range []int{2, 8, 32} {
		t.Run(fmt.Sprint(writers), func(t *testing.T) {
			t.Parallel()
			for round := range 10 {
				dir := t.TempDir()
				s, err := Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				old := fillFailures(t, filepath.Join(dir, failuresFile))
				var start, wg sync.WaitGroup
				start.Add(1)
				for i := range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						start.Wait()
						if err := s.RecordFailure(Failure{Time: time.Now(), Reason: "create", Subject: fmt.Sprintf("new-%d", i), Error: "x"}); err != nil {
							t.Error(err)
						}
					}()
				}
				start.Done()
				wg.Wait()
				if got := countLines(t, filepath.Join(dir, failuresFile+".1"), "old-"); got != old {
					t.Fatalf("round %d: failures.jsonl.1 holds %d of the full log's %d records", round, got, old)
				}
				if got := countLines(t, filepath.Join(dir, failuresFile), "new-") + countLines(t, filepath.Join(dir, failuresFile+".1"), "new-"); got != writers {
					t.Fatalf("round %d: %d of %d new records kept", round, got, writers)
				}
			}
		})
	}
}

// fillFailures writes a log just past the rotation size and returns its record count.
func fillFailures(t *testing.T, path string) int {
	t.Helper()
	var b bytes.Buffer
	n := 0
	for b.Len() <= maxFailuresSize {
		fmt.Fprintf(&b, `{"time":"2026-01-01T00:00:00Z","reason":"create","subject":"old-%d","error":"%s"}`+"\n", n, strings.Repeat("e", 200))
		n++
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return n
}

func countLines(t *testing.T, path, word string) int {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.Contains(sc.Text(), word) {
			n++
		}
	}
	return n
}
