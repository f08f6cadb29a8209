package config

import (
	"bytes"
	"os"
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// PolicyHint reads just the failure policy from a config file that failed to load, so a
// front end still honours failurePolicy: closed when something else in the file is broken
// (docs/reference/failure-policy.md promises it). "" when the file states no policy it can
// find, or cannot be read: the default (open) then applies, as for an empty file.
func PolicyHint(path string) FailurePolicy {
	if path == "" {
		path = DefaultPath
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) > maxFileSize {
		return ""
	}
	return policyHint(b)
}

// policyHint is the policy the file states. A file YAML reads says what YAML reads of it.
// One it cannot read (a tab, a duplicate key, a truncated or garbled part anywhere) is read
// line by line: each top-level line YAML reads on its own as a failurePolicy entry counts,
// so an error elsewhere hides nothing. Closed wins over open (a file that says both, as a
// duplicate key does, is refused by the loader: the operator's closed stands), and the key
// and value are read in any letter case, since a broken file is read for what it means,
// not held to its spelling. The loader itself stays strict.
func policyHint(b []byte) FailurePolicy {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	var m map[string]any
	if yaml.Unmarshal(b, &m) == nil {
		return policyIn(m)
	}
	var hint FailurePolicy
	read := 0
	for line := range bytes.Lines(b) {
		line = bytes.TrimRight(line, "\r\n")
		if !mayStatePolicy(line) || read >= maxHintLines {
			continue
		}
		read++
		var lm map[string]any
		if yaml.Unmarshal(line, &lm) != nil {
			continue
		}
		hint = stronger(hint, policyIn(lm))
	}
	// JSON (or YAML flow style) has its entries anywhere on a line, often indented.
	if first := bytes.TrimLeft(b, " \t\r\n"); len(first) > 0 && first[0] == '{' {
		for _, sm := range flowPolicy.FindAllSubmatch(b, maxHintLines) {
			hint = stronger(hint, policyOf(string(sm[1])))
		}
	}
	return hint
}

// maxHintLines bounds the lines read one by one: a config states its policy once, and a
// megabyte of garbage must not cost each hook call a parse per line.
const maxHintLines = 4096

// flowPolicy is a failurePolicy entry of a flow mapping (JSON).
var flowPolicy = regexp.MustCompile(`(?i)["']?failurePolicy["']?\s*:\s*["']?(open|closed)\b`)

// mayStatePolicy says whether a line can be a top-level entry stating a policy: not
// indented (an indented line belongs to another key's value, or is a tab YAML refuses), and
// holding the word, or an escape that may spell it.
func mayStatePolicy(line []byte) bool {
	if len(line) == 0 || line[0] == ' ' || line[0] == '\t' {
		return false
	}
	l := bytes.ToLower(line)
	return bytes.Contains(l, []byte("closed")) || bytes.Contains(l, []byte("open")) || bytes.IndexByte(l, '\\') >= 0
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

func policyOf(s string) FailurePolicy {
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
