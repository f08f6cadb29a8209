package config

import (
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

// A parsed selector is made of valid keys and values, and every requirement decides alone:
// labels that meet it all match, and dropping one "=" label breaks the match.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"", "app=web", "a!=b,!c,d", "x.io/k==v", "app in (a)", "=", ",,", "!"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseSelector(s)
		if err != nil {
			return
		}
		labels := map[string]string{}
		for _, r := range sel {
			if !labelKey(r.Key) || !labelValue(r.Value) {
				t.Fatalf("%q: accepted requirement %+v", s, r)
			}
			if r.Op == "=" || r.Op == "exists" {
				labels[r.Key] = r.Value
			}
		}
		if !sel.Matches(labels) {
			// A contradictory selector (a=1,a!=1 or a,!a) matches nothing; any other must
			// match the labels built from it.
			if !contradictory(sel) {
				t.Fatalf("%q does not match %v", s, labels)
			}
			return
		}
		for _, r := range sel {
			if r.Op != "=" {
				continue
			}
			without := map[string]string{}
			for k, v := range labels {
				if k != r.Key {
					without[k] = v
				}
			}
			if sel.Matches(without) {
				t.Fatalf("%q matches %v without %s", s, without, r.Key)
			}
		}
	})
}

func contradictory(sel Selector) bool {
	want := map[string]string{}
	for _, r := range sel {
		if r.Op == "=" {
			if v, ok := want[r.Key]; ok && v != r.Value {
				return true
			}
			want[r.Key] = r.Value
		}
	}
	for _, r := range sel {
		v, set := want[r.Key]
		exists := false
		for _, q := range sel {
			if q.Key == r.Key && q.Op == "exists" {
				exists = true
			}
		}
		if (r.Op == "!=" && set && v == r.Value) || (r.Op == "!exists" && (set || exists)) {
			return true
		}
	}
	return false
}
