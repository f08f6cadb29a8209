package config

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestSelector(t *testing.T) {
	t.Parallel()
	web := map[string]string{"app": "web", "tier": "front", "example.com/team": "a"}
	for _, tc := range []struct {
		sel     string
		labels  map[string]string
		match   bool
		wantErr bool
	}{
		{"", web, true, false},
		{"app=web", web, true, false},
		{"app==web", web, true, false},
		{" app = web , tier=front ", web, true, false},
		{"app=db", web, false, false},
		{"app!=db", web, true, false},
		{"app!=web", web, false, false},
		{"missing!=x", web, true, false},
		{"tier", web, true, false},
		{"canary", web, false, false},
		{"!canary", web, true, false},
		{"!tier", web, false, false},
		{"example.com/team=a", web, true, false},
		{"app=", map[string]string{"app": ""}, true, false},
		{"app=web", nil, false, false},
		{"app in (web)", web, false, true},
		{"=web", web, false, true},
		{"app=we b", web, false, true},
		{"app=web,", web, false, true},
		{"/x=1", web, false, true},
		{"Bad_Prefix/x=1", web, false, true},
		{strings.Repeat("a", 64) + "=1", web, false, true},
	} {
		s, err := ParseSelector(tc.sel)
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: error %v, want error %v", tc.sel, err, tc.wantErr)
			continue
		}
		if err == nil && s.Matches(tc.labels) != tc.match {
			t.Errorf("%q on %v: match %v, want %v", tc.sel, tc.labels, !tc.match, tc.match)
		}
	}
}

// A parsed selector is made of valid keys and values, and every requirement counts: labels
// built to meet them all match unless the selector contradicts itself, and dropping a label
// an "=" requirement names breaks the match.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"", "app=web", "a!=b,!c,d", "x.io/k==v", "app in (a)", "=", ",,", "!", "0=0,0", "a!=,a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseSelector(s)
		if err != nil {
			return
		}
		for _, r := range sel {
			if !labelKey(r.Key) || !labelValue(r.Value) {
				t.Fatalf("%q: accepted requirement %+v", s, r)
			}
		}
		labels := meeting(sel)
		if !sel.Matches(labels) {
			if !contradictory(sel) {
				t.Fatalf("%q does not match %v", s, labels)
			}
			return
		}
		for _, r := range sel {
			if r.Op != "=" {
				continue
			}
			without := maps.Clone(labels)
			delete(without, r.Key)
			if sel.Matches(without) {
				t.Fatalf("%q matches %v without %s", s, without, r.Key)
			}
		}
	})
}

// meeting builds labels meant to meet every requirement: "=" sets its value, "exists" a
// value no "!=" excludes, "!=" and "!exists" leave the label out.
func meeting(sel Selector) map[string]string {
	labels := map[string]string{}
	for _, r := range sel {
		if r.Op == "=" {
			labels[r.Key] = r.Value
		}
	}
	for _, r := range sel {
		if _, set := labels[r.Key]; r.Op != "exists" || set {
			continue
		}
		v := "x"
		for slices.ContainsFunc(sel, func(q Requirement) bool { return q.Key == r.Key && q.Op == "!=" && q.Value == v }) {
			v += "x"
		}
		labels[r.Key] = v
	}
	return labels
}

// contradictory reports a selector no labels can meet: two values for a key, a value both
// required and excluded, a key both required and excluded.
func contradictory(sel Selector) bool {
	for _, r := range sel {
		for _, q := range sel {
			if r.Key != q.Key {
				continue
			}
			switch {
			case r.Op == "=" && q.Op == "=" && r.Value != q.Value,
				r.Op == "=" && q.Op == "!=" && r.Value == q.Value,
				(r.Op == "=" || r.Op == "exists") && q.Op == "!exists":
				return true
			}
		}
	}
	return false
}
