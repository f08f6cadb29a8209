package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// A file that cannot be loaded still has its failurePolicy: closed honoured, whatever is
// broken elsewhere in it; one that states no policy a reader can find gets the default
// (open), as an empty file does.
func TestPolicyHintBrokenFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       FailurePolicy
	}{
		{"bad value of another key", "failurePolicy: closed\nretention: soon\n", FailClosed},
		{"unknown key", "failurePolicy: open\nbogus: 1\n", FailOpen},
		{"not a policy", "failurePolicy: sometimes\n", ""},
		{"not YAML", "[", ""},
		{"tab indentation", "failurePolicy: closed\nnamespaces:\n\tinclude: [a]\n", FailClosed},
		{"tab before the policy", "retention: 5m\n\tx: 1\nfailurePolicy: closed\n", FailClosed},
		{"duplicate key, closed second", "failurePolicy: open\nfailurePolicy: closed\n", FailClosed},
		{"duplicate key, closed first", "failurePolicy: closed\nfailurePolicy: open\n", FailClosed},
		{"duplicate other key", "retention: 5m\nfailurePolicy: closed\nretention: 6m\n", FailClosed},
		{"truncated", "failurePolicy: closed\nnamespaces:\n  include: [a, b", FailClosed},
		{"truncated mid-quote", "log: \"file:/x\nfailurePolicy: closed\nhookBudget: \"2", FailClosed},
		{"quoted", "failurePolicy: \"closed\"\n\tx\n", FailClosed},
		{"single-quoted key and value, comment", "'failurePolicy': 'closed'   # refuse\n\tx\n", FailClosed},
		{"CRLF", "failurePolicy: closed\r\n\tx\r\n", FailClosed},
		{"byte order mark", "\ufefffailurePolicy: closed\n\tx\n", FailClosed},
		{"after a document marker", "---\nfailurePolicy: closed\n\tx\n", FailClosed},
		{"letter case", "FailurePolicy: Closed\n", FailClosed},
		{"open, comment names closed", "failurePolicy: open   # closed would refuse\n\tx\n", FailOpen},
		{"comment line", "# failurePolicy: closed\n\tx\n", ""},
		{"nested, not top-level", "x:\n  failurePolicy: closed\n\ty\n", ""},
		{"value with more words", "failurePolicy: closed please\n\tx\n", ""},
		{"broken JSON", `{"failurePolicy": "closed", "retention": }`, FailClosed},
		{"truncated JSON", "{\n  \"retention\": \"5m\",\n  \"failurePolicy\": \"closed\",\n  \"log\": ", FailClosed},
		{"garbage", "\x00\x01\x02 not a config at all", ""},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := policyHint([]byte(tc.text)); got != tc.want {
				t.Errorf("policyHint(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

// The hint as Resolve uses it: a file that fails to load with closed in it resolves to
// closed; one with no readable policy to the default.
func TestResolveBrokenFileHonoursClosed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for text, want := range map[string]FailurePolicy{
		"failurePolicy: closed\nnamespaces:\n\tinclude: [a]\n": FailClosed,
		"failurePolicy: open\nfailurePolicy: closed\n":         FailClosed,
		"\x00garbage": FailOpen,
	} {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Resolve(path, nil, nil)
		if err == nil {
			t.Errorf("%q loaded", text)
		}
		if cfg.FailurePolicy != want {
			t.Errorf("%q: failurePolicy %q, want %q", text, cfg.FailurePolicy, want)
		}
	}
}

// FuzzPolicyHint: the hint never panics; a file YAML reads says what YAML reads of it; in a
// file YAML cannot read, a top-level line that YAML reads (alone) as failurePolicy: closed
// makes the hint closed, whatever else is broken.
func FuzzPolicyHint(f *testing.F) {
	for _, s := range []string{
		"failurePolicy: closed\n\tx\n", "failurePolicy: open\nfailurePolicy: closed\n", "[",
		"failurePolicy: \"closed\" # c\n", "{\"failurePolicy\": \"closed\",", "x:\n  failurePolicy: closed\n\t",
		"failurePolicy: !!str closed\n\t", "failurePolicy: \"\\x63losed\"\n\t", "{failurePolicy: closed}\n\t",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hint := policyHint([]byte(s))
		var whole map[string]any
		if yaml.Unmarshal([]byte(s), &whole) == nil {
			if whole["failurePolicy"] == "closed" && hint != FailClosed {
				t.Errorf("%q reads as failurePolicy: closed; the hint says %q", s, hint)
			}
			return
		}
		for _, line := range strings.Split(s, "\n") {
			line = strings.TrimSuffix(line, "\r")
			if line == "" || line[0] == ' ' || line[0] == '\t' {
				continue
			}
			var m map[string]any
			if yaml.Unmarshal([]byte(line), &m) == nil && m["failurePolicy"] == "closed" && hint != FailClosed {
				t.Errorf("%q has the line %q; the hint says %q, want closed", s, line, hint)
			}
		}
	})
}
