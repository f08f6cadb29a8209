package resctrlfs

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func FuzzParseTasks(f *testing.F) {
	f.Add([]byte("1\n22\n333\n"))
	f.Add([]byte("x\n-4\n0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for tid := range ParseTasks(b) {
			if tid <= 0 {
				t.Errorf("task id %d from %q", tid, b)
			}
		}
	})
}

func TestParseCounter(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]struct {
		v      float64
		reason string
	}{
		"12345\n":       {12345, ""},
		"1843.250000\n": {1843.25, ""},
		"0":             {0, ""},
		"Unavailable\n": {0, "Unavailable"},
		"Error":         {0, "Error"},
		"Unassigned\n":  {0, "Unassigned"},
		"":              {0, ReasonMalformed},
		"-1":            {0, ReasonMalformed},
		"NaN":           {0, ReasonMalformed},
		"Inf":           {0, ReasonMalformed},
		"0x10":          {0, ReasonMalformed},
		"1_000":         {0, ReasonMalformed},
		"12 34":         {0, ReasonMalformed},
	} {
		v, reason := ParseCounter([]byte(in))
		if v != want.v || reason != want.reason {
			t.Errorf("ParseCounter(%q) = %v, %q; want %v, %q", in, v, reason, want.v, want.reason)
		}
	}
}

// Whatever a counter file holds, a value comes back only as a finite non-negative number,
// and a reason only without one; a printed value parses back to itself.
func FuzzParseCounter(f *testing.F) {
	for _, s := range []string{"0", "123\n", "1843.25\n", "Unavailable\n", "Error", "Unassigned", "-3", "1e400", "nan"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, reason := ParseCounter(b)
		if reason != "" && v != 0 {
			t.Errorf("%q: value %v with reason %q", b, v, reason)
		}
		if reason == "" && (v < 0 || math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Errorf("%q: value %v", b, v)
		}
		if reason == "" {
			again, r2 := ParseCounter([]byte(strconv.FormatFloat(v, 'f', -1, 64) + "\n"))
			if r2 != "" || again != v {
				t.Errorf("%q: %v does not round-trip (%v, %q)", b, v, again, r2)
			}
		}
	})
}

func TestDomainID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]string{
		"mon_L3_00":       {"L3", "0"},
		"mon_L3_01":       {"L3", "1"},
		"mon_PERF_PKG_12": {"PERF_PKG", "12"},
	} {
		r, id, err := DomainID(in)
		if err != nil || r != want[0] || id != want[1] {
			t.Errorf("DomainID(%q) = %q, %q, %v", in, r, id, err)
		}
	}
	for _, bad := range []string{"", "mon_", "mon_L3", "mon_L3_", "L3_00", "mon_L3_x", "mon__00"} {
		if _, _, err := DomainID(bad); err == nil {
			t.Errorf("DomainID(%q) accepted", bad)
		}
	}
}

func FuzzDomainID(f *testing.F) {
	f.Add("mon_L3_00")
	f.Add("mon_PERF_PKG_01")
	f.Fuzz(func(t *testing.T, s string) {
		r, id, err := DomainID(s)
		if err != nil {
			return
		}
		if r == "" || id == "" {
			t.Errorf("%q: empty part %q %q", s, r, id)
		}
		if _, err := strconv.ParseUint(id, 10, 32); err != nil {
			t.Errorf("%q: id %q", s, id)
		}
	})
}

func TestSubdomainID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]string{
		"mon_sub_L3_00": {"L3", "0"},
		"mon_sub_L3_03": {"L3", "3"},
		"mon_sub_L3_11": {"L3", "11"},
	} {
		r, id, err := SubdomainID(in)
		if err != nil || r != want[0] || id != want[1] {
			t.Errorf("SubdomainID(%q) = %q, %q, %v", in, r, id, err)
		}
	}
	for _, bad := range []string{"", "mon_L3_00", "mon_sub_", "mon_sub_L3", "mon_sub_L3_", "mon_sub_L3_x", "mon_sub__01", "sub_L3_01"} {
		if _, _, err := SubdomainID(bad); err == nil {
			t.Errorf("SubdomainID(%q) accepted", bad)
		}
	}
}

// Whatever a directory is called, SubdomainID accepts only mon_sub_<resource>_<number>, and
// reads it as DomainID reads mon_<resource>_<number>.
func FuzzSubdomainID(f *testing.F) {
	f.Add("mon_sub_L3_00")
	f.Add("mon_sub_L3_x")
	f.Add("mon_L3_01")
	f.Fuzz(func(t *testing.T, s string) {
		r, id, err := SubdomainID(s)
		if err != nil {
			return
		}
		rest, ok := strings.CutPrefix(s, "mon_sub_")
		dr, did, derr := DomainID("mon_" + rest)
		if !ok || r == "" || id == "" || derr != nil || dr != r || did != id {
			t.Errorf("%q: %q %q, DomainID %q %q %v", s, r, id, dr, did, derr)
		}
	})
}
