package top

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// SortKey is a column to sort by.
type SortKey string

// The columns a frame can be sorted by; every one but SortName puts the largest first.
const (
	SortBW     SortKey = "bw"
	SortLLC    SortKey = "llc"
	SortEnergy SortKey = "energy"
	SortCPU    SortKey = "cpu"
	SortMemory SortKey = "mem"
	SortIO     SortKey = "io"
	SortName   SortKey = "name"
)

// SortKeys lists every SortKey.
var SortKeys = []SortKey{SortBW, SortLLC, SortEnergy, SortCPU, SortMemory, SortIO, SortName}

// ParseSortKey checks a --sort value.
func ParseSortKey(s string) (SortKey, error) {
	k := SortKey(s)
	if !slices.Contains(SortKeys, k) {
		keys := make([]string, len(SortKeys))
		for i, k := range SortKeys {
			keys[i] = string(k)
		}
		return "", fmt.Errorf("sort by %q: want one of %s", s, strings.Join(keys, ", "))
	}
	return k, nil
}

func (k SortKey) cell(r Row) Cell {
	switch k {
	case SortBW:
		return r.BW
	case SortLLC:
		return r.LLC
	case SortEnergy:
		return r.Energy
	case SortCPU:
		return r.CPU
	case SortMemory:
		return r.Memory
	case SortIO:
		return r.IO
	}
	return Cell{}
}

// Sort orders rows by k: the largest value first, rows with no number for it ("-", blank)
// after every row with one; ties, and SortName, by name then group, so the order is stable
// from frame to frame.
func Sort(rows []Row, k SortKey) {
	slices.SortStableFunc(rows, func(a, b Row) int {
		if k != SortName {
			ca, cb := k.cell(a), k.cell(b)
			if c := cmp.Compare(cb.Kind.rank(), ca.Kind.rank()); c != 0 {
				return c // Value before Skip before Unassigned before None
			}
			if c := cmp.Compare(cb.V, ca.V); c != 0 {
				return c
			}
		}
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Group, b.Group))
	})
}
