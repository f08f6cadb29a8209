package top

import (
	"slices"
	"strings"
	"testing"
)

// ParseSortKey takes --sort's text: it accepts exactly the listed keys, each as itself, and
// a refusal names what was given and every key that would do.
func FuzzParseSortKey(f *testing.F) {
	for _, k := range SortKeys {
		f.Add(string(k))
	}
	for _, s := range []string{"", "BW", " bw", "bw ", "b", "names", "mem\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseSortKey(s)
		if err != nil {
			if k != "" || slices.Contains(SortKeys, SortKey(s)) {
				t.Errorf("ParseSortKey(%q) = %q, %v", s, k, err)
			}
			for _, want := range SortKeys {
				if !strings.Contains(err.Error(), string(want)) {
					t.Errorf("the refusal of %q does not name %q: %v", s, want, err)
				}
			}
			return
		}
		if string(k) != s || !slices.Contains(SortKeys, k) {
			t.Errorf("ParseSortKey(%q) = %q", s, k)
		}
	})
}
