package top

import (
	"slices"
	"testing"
)

func TestSort(t *testing.T) {
	t.Parallel()
	rows := []Row{
		{Name: "a/none", Group: "g1"},
		{Name: "a/skip", Group: "g2", BW: Cell{Kind: Skip}, CPU: value(50)},
		{Name: "b/small", Group: "g3", BW: value(10), LLC: value(900), CPU: value(5)},
		{Name: "c/big", Group: "g4", BW: value(1e9), LLC: value(100), Energy: value(3)},
		{Name: "c/big", Group: "g0", BW: value(1e9)}, // same name and value: by group
		{Name: "d/zero", Group: "g5", BW: value(0)},
		{Name: "e/uncounted", Group: "g6", BW: Cell{Kind: Unassigned}},
	}
	for _, tc := range []struct {
		key  SortKey
		want []string
	}{
		// Numbers first, largest first, zero before "-" before "unassigned" before blank.
		{SortBW, []string{"g0", "g4", "g3", "g5", "g2", "g6", "g1"}},
		{SortLLC, []string{"g3", "g4", "g1", "g2", "g0", "g5", "g6"}},
		{SortEnergy, []string{"g4", "g1", "g2", "g3", "g0", "g5", "g6"}},
		{SortCPU, []string{"g2", "g3", "g1", "g0", "g4", "g5", "g6"}},
		{SortName, []string{"g1", "g2", "g3", "g0", "g4", "g5", "g6"}},
	} {
		t.Run(string(tc.key), func(t *testing.T) {
			t.Parallel()
			rs := slices.Clone(rows)
			slices.Reverse(rs) // the input order must not matter
			Sort(rs, tc.key)
			var got []string
			for _, r := range rs {
				got = append(got, r.Group)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("sort %s: %v, want %v", tc.key, got, tc.want)
			}
		})
	}
}

func TestParseSortKey(t *testing.T) {
	t.Parallel()
	for _, k := range SortKeys {
		if got, err := ParseSortKey(string(k)); err != nil || got != k {
			t.Errorf("ParseSortKey(%q) = %q, %v", k, got, err)
		}
	}
	for _, bad := range []string{"", "BW", "bandwidth", "mem%"} {
		if _, err := ParseSortKey(bad); err == nil {
			t.Errorf("ParseSortKey(%q): no error", bad)
		}
	}
}
