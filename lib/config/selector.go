package config

import (
	"fmt"
	"strings"
)

// Selector is a Kubernetes equality-based label selector, as `kubectl get -l` takes it and
// as users of the nri-plugins resctrl-mon plugin select pods: requirements separated by
// commas, each `key=value` (or `key==value`), `key!=value`, `key` (the label is set) or
// `!key` (it is not). Set-based forms (`in`, `notin`) are not accepted.
type Selector []Requirement

// Requirement is one term of a Selector.
type Requirement struct {
	Key   string
	Op    string // "=", "!=", "exists", "!exists"
	Value string
}

// maxSelector bounds a selector: a config value, not a data set.
const maxSelector = 4096

// ParseSelector parses a selector; "" selects everything.
func ParseSelector(s string) (Selector, error) {
	if len(s) > maxSelector {
		return nil, fmt.Errorf("selector is longer than %d bytes", maxSelector)
	}
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out Selector
	for term := range strings.SplitSeq(s, ",") {
		term = strings.TrimSpace(term)
		var r Requirement
		switch {
		case strings.Contains(term, "!="):
			k, v, _ := strings.Cut(term, "!=")
			r = Requirement{Key: strings.TrimSpace(k), Op: "!=", Value: strings.TrimSpace(v)}
		case strings.Contains(term, "="):
			k, v, _ := strings.Cut(term, "=")
			v = strings.TrimPrefix(v, "=")
			r = Requirement{Key: strings.TrimSpace(k), Op: "=", Value: strings.TrimSpace(v)}
		case strings.HasPrefix(term, "!"):
			r = Requirement{Key: strings.TrimSpace(term[1:]), Op: "!exists"}
		default:
			r = Requirement{Key: term, Op: "exists"}
		}
		if !labelKey(r.Key) {
			return nil, fmt.Errorf("%q: %q is not a label key", term, r.Key)
		}
		if !labelValue(r.Value) {
			return nil, fmt.Errorf("%q: %q is not a label value", term, r.Value)
		}
		out = append(out, r)
	}
	return out, nil
}

// Matches reports whether labels meet every requirement.
func (s Selector) Matches(labels map[string]string) bool {
	for _, r := range s {
		v, ok := labels[r.Key]
		switch r.Op {
		case "=":
			if !ok || v != r.Value {
				return false
			}
		case "!=":
			if ok && v == r.Value {
				return false
			}
		case "exists":
			if !ok {
				return false
			}
		case "!exists":
			if ok {
				return false
			}
		}
	}
	return true
}

// labelKey: an optional DNS-subdomain prefix and '/', then a name of at most 63 characters
// (alphanumerics, '-', '_', '.', starting and ending alphanumeric).
func labelKey(k string) bool {
	prefix, name, ok := strings.Cut(k, "/")
	if !ok {
		name = k
	} else if prefix == "" || len(prefix) > 253 || !subdomain(prefix) {
		return false
	}
	return name != "" && labelValue(name)
}

// labelValue: empty, or at most 63 alphanumerics, '-', '_', '.', starting and ending
// alphanumeric.
func labelValue(v string) bool {
	if v == "" {
		return true
	}
	if len(v) > 63 {
		return false
	}
	for i := range len(v) {
		if c := v[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return alnum(v[0]) && alnum(v[len(v)-1])
}

func subdomain(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '.' {
			return false
		}
	}
	return alnum(s[0]) && alnum(s[len(s)-1])
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
