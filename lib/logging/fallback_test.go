package logging

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fallback log lives in the state dir, on tmpfs, which is memory: however much is logged,
// it and its one older generation stay within fallbackMax each (plus the line that crossed it).
func TestFallbackLogIsCapped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fallback := filepath.Join(dir, "hook.log")
	log, closer, err := Open("syslog", "test", fallback, WithSyslogSocket(filepath.Join(dir, "no-syslog")))
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 16<<10)
	const line = 17 << 10 // one record: the attribute and its key, level, time, prog
	for range 3 * fallbackMax / (16 << 10) {
		log.Info("filler", "data", big)
	}
	log.Info("last line")
	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fallback, fallback + ".1"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > fallbackMax+line {
			t.Errorf("%s is %d bytes, over %d", p, fi.Size(), fallbackMax+line)
		}
	}
	// The newest lines are in the current file.
	b, err := os.ReadFile(fallback)
	if err != nil || !strings.Contains(string(b), "last line") {
		t.Errorf("the last line is not in %s (%v)", fallback, err)
	}
	// A process that opens a full log rotates it first.
	if err := os.WriteFile(fallback, []byte(strings.Repeat("y", fallbackMax+1)), 0o640); err != nil {
		t.Fatal(err)
	}
	log, closer, err = Open("syslog", "test", fallback, WithSyslogSocket(filepath.Join(dir, "no-syslog")))
	if err != nil {
		t.Fatal(err)
	}
	log.Info("fresh")
	_ = closer.Close()
	if fi, err := os.Stat(fallback); err != nil || fi.Size() > line {
		t.Errorf("after opening a full log: %v, %v; want a fresh file", fi, err)
	}
}
