package logging

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// OpenOr never fails: a log that cannot be opened is said on w and written there, or, with w
// nil, dropped; one that opens is the log Open gives.
func TestOpenOr(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		name, target string
		w            bool
		wantOnW      []string
	}{
		{"opened", "file:" + filepath.Join(dir, "ok.log"), true, nil},
		{"refused, said on w", "nowhere", true, []string{`tag: log: unknown target "nowhere"`, "msg=hello"}},
		{"refused, dropped", "nowhere", false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			var w io.Writer // nil unless the case gives one
			if c.w {
				w = &buf
			}
			log, closer := OpenOr(w, c.target, "tag", filepath.Join(dir, "fallback.log"))
			log.Info("hello")
			if err := closer.Close(); err != nil {
				t.Fatal(err)
			}
			for _, want := range c.wantOnW {
				if !strings.Contains(buf.String(), want) {
					t.Errorf("w holds %q, want %q in it", buf.String(), want)
				}
			}
			if c.wantOnW == nil && buf.Len() > 0 {
				t.Errorf("w holds %q, want nothing", buf.String())
			}
			if path, ok := strings.CutPrefix(c.target, "file:"); ok {
				if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), "msg=hello") {
					t.Errorf("the opened log holds %q (%v), want the line", b, err)
				}
			}
		})
	}
}
