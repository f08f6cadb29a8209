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
		{"value on the next line", "failurePolicy:\n  closed\n\tx\n", FailClosed},
		{"literal block scalar", "failurePolicy: |\n  closed\n\tx\n", FailClosed},
		{"folded block scalar, stripped", "failurePolicy: >-\n    closed\nretention: soon\n\tx\n", FailClosed},
		{"document indented throughout", "  retention: 5m\n  failurePolicy: closed\n\tx\n", FailClosed},
		{"indented document, value on the next line", "   failurePolicy:\n     'closed'\n   retention: [\n", FailClosed},
		{"explicit key", "? failurePolicy\n: closed\n\tx\n", FailClosed},
		{"escaped key", "\"failure\\x50olicy\": \"clo\\u0073ed\"\n\tx\n", FailClosed},
		{"tagged key and value", "!!str failurePolicy: !!str closed\n\tx\n", FailClosed},
		{"binary value", "failurePolicy: !!binary Y2xvc2Vk\n\tx\n", FailClosed},
		{"alias of an anchor before it", "mode: &m closed\nfailurePolicy: *m\n\tx\n", FailClosed},
		{"escaped line break in the value", "failurePolicy: \"clo\\\n  sed\"\n\tx\n", FailClosed},
		{"flow mapping on one line", "{failurePolicy: closed}\n\tx\n", FailClosed},
		{"after a directive", "%YAML 1.2\n---\nfailurePolicy: closed\n\tx\n", FailClosed},
		{"block scalar holding the words", "notes: |\n  failurePolicy: closed\n\tx\n", ""},
		{"value continued on the next line", "failurePolicy: closed\n  later\nretention: [\n", ""},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := hintOf(tc.text); got != tc.want {
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

// policyForms are failurePolicy: closed written in the forms YAML allows, one line each of
// the entry (relative indentation kept): keys plain, quoted, escaped, tagged, explicit;
// values plain, quoted, escaped, tagged, binary, on the next line, as block scalars of
// every chomping, across an escaped line break, after an anchor, in a flow mapping.
var policyForms = func() [][]string {
	keys := []string{"failurePolicy", `"failurePolicy"`, "'failurePolicy'", `"failure\x50olicy"`,
		`"\u0066ailurePolicy"`, "!!str failurePolicy", "FailurePolicy"}
	values := [][]string{{" closed"}, {` "closed"`}, {" 'closed'"}, {" !!str closed"}, {` "clo\u0073ed"`},
		{" closed   # a comment"}, {" &p closed"}, {" !!binary Y2xvc2Vk"}, {" CLOSED"},
		{"", "  closed"}, {"", "    \"closed\""}, {"   # why", "  closed"},
		{" |", "  closed"}, {" |-", "  closed"}, {" |+", "  closed"}, {" >", "  closed"}, {" >-", "   closed"},
		{" |2", "   closed"}, {` "clo\`, `  sed"`}}
	var forms [][]string
	for _, k := range keys {
		for _, v := range values {
			forms = append(forms, append([]string{k + ":" + v[0]}, v[1:]...))
		}
	}
	return append(forms, []string{"? failurePolicy", ": closed"}, []string{"? failurePolicy", ":", "  closed"},
		[]string{"{failurePolicy: closed}"}, []string{`{"failurePolicy": "closed"}`})
}()

// FuzzPolicyHint: the hint never panics, and failurePolicy: closed, in any form YAML allows
// (policyForms), at any indentation of the whole document, with CRLF or a byte order mark,
// among any other top-level entries (the fuzzer's lines), reads as closed: a document YAML
// reads says what YAML reads of it (the other lines may have made the entry part of theirs),
// and one it cannot read is closed whatever else in it is broken.
func FuzzPolicyHint(f *testing.F) {
	f.Add(uint16(0), uint8(0), "retention: 5m\n\tx: 1", "failurePolicy: open")
	f.Add(uint16(9), uint8(2), "[", "notes: |")
	f.Add(uint16(12), uint8(0x11), "log: \"file:/x", "hookBudget: \"2")
	f.Add(uint16(140), uint8(4), "mode: &m open\nx: *m", "failurePolicy: {")
	f.Add(uint16(143), uint8(0x23), "{\"a\": 1,", "}")
	f.Fuzz(func(t *testing.T, form uint16, layout uint8, before, after string) {
		entry := policyForms[int(form)%len(policyForms)]
		indent := strings.Repeat(" ", int(layout&7))
		nl := "\n"
		if layout&16 != 0 {
			nl = "\r\n"
		}
		var doc strings.Builder
		if layout&32 != 0 {
			doc.WriteString("\ufeff")
		}
		write := func(lines []string, other bool) {
			for _, l := range lines {
				if other { // another top-level entry: it starts at the document's depth
					l = "x" + strings.TrimRight(l, "\r")
				}
				doc.WriteString(indent + l + nl)
			}
		}
		alone := strings.Join(entry, "\n")
		if policyOfYAML(t, alone) != FailClosed {
			t.Fatalf("the form %q does not read as failurePolicy: closed", alone)
		}
		write(strings.Split(before, "\n"), true)
		write(entry, false)
		write(strings.Split(after, "\n"), true)
		s := doc.String()
		hint := hintOf(s)
		if len(s) <= maxFileSize {
			var whole map[string]any
			if yaml.Unmarshal([]byte(strings.TrimPrefix(s, "\ufeff")), &whole) == nil {
				if want := policyIn(whole); hint != want {
					t.Errorf("%q reads as failurePolicy %q; the hint says %q", s, want, hint)
				}
				return
			}
		}
		if hint != FailClosed {
			t.Errorf("%q has the entry %q; the hint says %q, want closed", s, alone, hint)
		}
	})
}

// policyOfYAML is what YAML alone reads of a document's failurePolicy.
func policyOfYAML(t *testing.T, s string) FailurePolicy {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		return ""
	}
	return policyIn(m)
}

// A file over the loader's limit is refused by the loader and still read for its policy,
// wherever in it the policy is, in bounded memory.
func TestPolicyHintLargeFile(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("# padding "+strings.Repeat("x", 100)+"\n", (4*maxFileSize)/110)
	long := strings.Repeat("y", 3*maxLineBytes) // a line longer than a line is read
	for name, text := range map[string]string{
		"policy first":      "failurePolicy: closed\n" + pad,
		"policy last":       pad + "failurePolicy:\n  closed\n",
		"after a long line": "notes: " + long + "\nfailurePolicy: closed\n" + pad,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(path, nil); err == nil {
				t.Fatalf("a %d-byte file loaded", len(text))
			}
			if got := PolicyHint(path); got != FailClosed {
				t.Errorf("PolicyHint of a %d-byte file = %q, want closed", len(text), got)
			}
		})
	}
}

func hintOf(s string) FailurePolicy { return policyHint(strings.NewReader(s)) }
