package resctrlfs

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestParseAssignMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		current string
		modes   []string
	}{
		{"[mbm_event]\ndefault\n", "mbm_event", []string{"mbm_event", "default"}},
		{"mbm_event\n[default]\n", "default", []string{"mbm_event", "default"}},
		{"[default]\n", "default", []string{"default"}},
		{"  [default]  \n\n", "default", []string{"default"}},
		{"", "", nil},
		{"mbm_event\ndefault\n", "", nil},     // none current
		{"[mbm_event]\n[default]\n", "", nil}, // two current
		{"[mbm_event\ndefault\n", "", nil},    // unclosed
		{"[mbm event]\n", "", nil},            // not a name
		{"[]\n", "", nil},
	} {
		cur, modes, err := ParseAssignMode([]byte(tc.in))
		if (err == nil) != (tc.current != "") || cur != tc.current || !slices.Equal(modes, tc.modes) {
			t.Errorf("%q: %q %q %v, want %q %q", tc.in, cur, modes, err, tc.current, tc.modes)
		}
	}
}

func TestParseDomainCounts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want map[string]int
	}{
		{"0=32;1=32\n", map[string]int{"0": 32, "1": 32}},
		{"0=30\n", map[string]int{"0": 30}},
		{"00=1;3=0", map[string]int{"0": 1, "3": 0}},
		{"", nil},
		{"0=", nil},
		{"=3", nil},
		{"0=-1", nil},
		{"0=1;0=2", nil},
		{"0=1;", nil},
		{"0:1", nil},
		{"x=1", nil},
	} {
		got, err := ParseDomainCounts([]byte(tc.in))
		if (err == nil) != (tc.want != nil) || !maps.Equal(got, tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParseAssignMode(f *testing.F) {
	for _, s := range []string{"[mbm_event]\ndefault\n", "[default]\n", "[a]\n[b]\n", "[\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cur, modes, err := ParseAssignMode(b)
		if err == nil && (cur == "" || !slices.Contains(modes, cur) || strings.ContainsAny(cur, "[] \n")) {
			t.Errorf("%q: current %q of %q", b, cur, modes)
		}
	})
}

func FuzzParseDomainCounts(f *testing.F) {
	for _, s := range []string{"0=32;1=32\n", "0=1", "1=2;1=3", ";"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseDomainCounts(b)
		if err != nil {
			return
		}
		if len(m) == 0 {
			t.Errorf("%q: accepted with no domain", b)
		}
		for id, n := range m {
			if _, _, err := DomainID("mon_L3_" + id); err != nil || n < 0 {
				t.Errorf("%q: domain %q count %d", b, id, n)
			}
		}
	})
}
