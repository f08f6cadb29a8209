package config

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// PolicyHint reads just the failure policy from a config file that failed to load, so a
// front end still honours failurePolicy: closed when something else in the file is broken
// (docs/reference/failure-policy.md promises it). "" when the file states no policy it can
// find, or cannot be opened: the default (open) then applies, as for an empty file. A file
// too big to load is read too: its size is one more thing broken in it.
func PolicyHint(path string) FailurePolicy {
	if path == "" {
		path = DefaultPath
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	return policyHint(f)
}

// policyHint is the policy the file states. A file YAML reads says what YAML reads of it.
// One it cannot read (a tab, a duplicate key, a truncated or garbled part anywhere, a size
// over the loader's limit) is read entry by entry (see entries): each top-level entry YAML
// reads on its own as failurePolicy counts, so an error elsewhere hides nothing, in whatever
// form YAML lets the entry be written (the value on the next line, a block scalar, quotes,
// escapes, tags, an explicit key, a document indented throughout). Closed wins over open (a
// file that says both, as a duplicate key does, is refused by the loader: the operator's
// closed stands), and the key and value are read in any letter case, since a broken file is
// read for what it means, not held to its spelling. The loader itself stays strict.
func policyHint(r io.Reader) FailurePolicy {
	br := bufio.NewReader(r)
	head, err := io.ReadAll(io.LimitReader(br, maxFileSize+1))
	if err != nil {
		return ""
	}
	head = bytes.TrimPrefix(head, []byte("\ufeff"))
	if len(head) <= maxFileSize {
		var m map[string]any
		if yaml.Unmarshal(head, &m) == nil {
			return policyIn(m)
		}
	}
	h := hinter{anchors: map[string][]byte{}}
	var hint FailurePolicy
	for e := range entries(io.MultiReader(bytes.NewReader(head), br)) {
		if h.parses >= maxHintParses {
			break
		}
		if bytes.IndexByte(e, '&') >= 0 || mayStatePolicy(e) {
			hint = stronger(hint, h.entryPolicy(e))
		}
	}
	return hint
}

const (
	// maxHintParses bounds the YAML parses of one file's entries: a config states its policy
	// once, and a megabyte of garbage must not cost a hook call a parse per line.
	maxHintParses = 8192
	// maxPrefixLines bounds the shorter readings of an entry YAML cannot read whole.
	maxPrefixLines = 32
	// maxAnchors bounds the anchors kept for aliases.
	maxAnchors = 64
	// maxEntryBytes bounds one entry held in memory; maxLineBytes one line of it.
	maxEntryBytes = maxFileSize
	maxLineBytes  = 64 << 10
)

// flowPolicy is a failurePolicy entry of a flow mapping (JSON).
var flowPolicy = regexp.MustCompile(`(?i)["']?failurePolicy["']?\s*:\s*["']?(open|closed)\b`)

// hinter reads entries one by one: the anchors they define, for the aliases of later
// ones, and the parses spent.
type hinter struct {
	anchors map[string][]byte // anchor name -> the entry that defines it last
	parses  int
}

// entryPolicy is the policy one top-level entry states. An entry YAML cannot read whole is
// read by its longest prefix YAML reads (a broken line after the policy's own lines hides
// nothing); one naming an alias, with the entries that define its anchors; a flow mapping
// (JSON), by its "failurePolicy": "closed" entries anywhere in it.
func (h *hinter) entryPolicy(e []byte) FailurePolicy {
	var hint FailurePolicy
	if first := bytes.TrimLeft(e, " \r\n"); len(first) > 0 && first[0] == '{' {
		for _, sm := range flowPolicy.FindAllSubmatch(e, maxHintParses) {
			hint = stronger(hint, policyOf(string(sm[1])))
		}
	}
	lines := bytes.SplitAfter(e, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for n := len(lines); n > 0 && h.parses < maxHintParses; n-- {
		if n < len(lines) && n > maxPrefixLines {
			n = maxPrefixLines
		}
		text := bytes.Join(lines[:n], nil)
		if p, ok := h.read(h.withAnchors(text)); ok {
			if n == len(lines) {
				h.keepAnchors(e)
			}
			return stronger(hint, p)
		}
	}
	return hint
}

var (
	anchorName = regexp.MustCompile(`&([^\s,\[\]{}]+)`)
	aliasName  = regexp.MustCompile(`\*([^\s,\[\]{}]+)`)
)

// withAnchors puts before an entry the entries that define the anchors its aliases name.
func (h *hinter) withAnchors(text []byte) []byte {
	var defs []byte
	for _, m := range aliasName.FindAllSubmatch(text, maxAnchors) {
		if d, ok := h.anchors[string(m[1])]; ok && !bytes.Contains(defs, d) {
			defs = append(append(defs, d...), '\n')
		}
	}
	return append(defs, text...)
}

func (h *hinter) keepAnchors(e []byte) {
	for _, m := range anchorName.FindAllSubmatch(e, maxAnchors) {
		if _, known := h.anchors[string(m[1])]; known || len(h.anchors) < maxAnchors {
			h.anchors[string(m[1])] = e
		}
	}
}

// read is the policy of a text YAML reads as a mapping.
func (h *hinter) read(b []byte) (FailurePolicy, bool) {
	h.parses++
	var m map[string]any
	if yaml.Unmarshal(b, &m) != nil {
		return "", false
	}
	return policyIn(m), true
}

// mayStatePolicy says whether an entry can state a policy: its key is the word, or written
// with an escape, a tag or an alias that may spell it.
func mayStatePolicy(e []byte) bool {
	return bytes.Contains(bytes.ToLower(e), []byte("failurepolicy")) || bytes.ContainsAny(e, `\!*`)
}

// policyIn is the policy a mapping's top-level failurePolicy keys state ("" for none).
func policyIn(m map[string]any) FailurePolicy {
	var hint FailurePolicy
	for k, v := range m {
		if s, ok := v.(string); ok && strings.EqualFold(k, "failurePolicy") {
			hint = stronger(hint, policyOf(s))
		}
	}
	return hint
}

// policyOf reads a value; the line break a block scalar keeps (`|`) is not part of the word.
func policyOf(s string) FailurePolicy {
	s = strings.TrimSpace(s)
	switch {
	case strings.EqualFold(s, string(FailClosed)):
		return FailClosed
	case strings.EqualFold(s, string(FailOpen)):
		return FailOpen
	}
	return ""
}

// stronger is closed over open over nothing.
func stronger(a, b FailurePolicy) FailurePolicy {
	if a == FailClosed || b == FailClosed {
		return FailClosed
	}
	if a == FailOpen || b == FailOpen {
		return FailOpen
	}
	return ""
}
