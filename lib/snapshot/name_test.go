package snapshot

import (
	"strings"
	"testing"
	"time"
)

const stamp0 = "20250601T110000.987654321Z" // life0's

func TestParseName(t *testing.T) {
	t.Parallel()
	hex64 := strings.Repeat("0123456789abcdef", 4)
	for name, want := range map[string]Name{
		uid + "." + stamp0 + ".begin":                            {uid, life0, Begin},
		uid + "." + stamp0 + ".end":                              {uid, life0, End},
		hex64 + "." + stamp0 + ".end":                            {hex64, life0, End},
		"ctr-" + hex64 + "." + stamp0 + ".begin":                 {"ctr-" + hex64, life0, Begin},
		"ctr-web.1.2." + stamp0 + ".end":                         {"ctr-web.1.2", life0, End}, // dots in a container id
		"ctr-a." + stamp0 + "." + stamp0 + ".end":                {"ctr-a." + stamp0, life0, End},
		"x." + stamp0 + ".end":                                   {"x", life0, End},
		"a..b." + stamp0 + ".begin":                              {"a..b", life0, Begin},
		"g.00010101T000000.000000001Z.end":                       {"g", time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), End},
		"g.99991231T235959.999999999Z.end":                       {"g", time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), End},
		"g.20240229T000000.000000000Z.end":                       {"g", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), End},
		strings.Repeat("z", maxGroupLen) + ".end":                {strings.Repeat("z", maxGroupLen), time.Time{}, End},
		strings.Repeat("z", maxGroupLen) + "." + stamp0 + ".end": {strings.Repeat("z", maxGroupLen), life0, End},
		// Version 1 names: no stamp. What is not a stamp is part of the group.
		uid + ".begin":                         {uid, time.Time{}, Begin},
		uid + ".end":                           {uid, time.Time{}, End},
		"x..end":                               {"x.", time.Time{}, End},
		"g.00010101T000000.000000000Z.end":     {"g.00010101T000000.000000000Z", time.Time{}, End}, // the zero time is no life
		"g.00001231T000000.000000000Z.end":     {"g.00001231T000000.000000000Z", time.Time{}, End}, // year 0
		"g.20250230T000000.000000000Z.end":     {"g.20250230T000000.000000000Z", time.Time{}, End}, // no 30 February
		"g.20250601T110000.98765432Z.end":      {"g.20250601T110000.98765432Z", time.Time{}, End},
		"g.20250601t110000.987654321Z.end":     {"g.20250601t110000.987654321Z", time.Time{}, End},
		"g.20250601T110000.987654321z.end":     {"g.20250601T110000.987654321z", time.Time{}, End},
		"g.2025-06-01T11:00:00.987654321Z.end": {"g.2025-06-01T11:00:00.987654321Z", time.Time{}, End},
		"g.+0250601T110000.987654321Z.end":     {"g.+0250601T110000.987654321Z", time.Time{}, End},
		stamp0 + ".end":                        {stamp0, time.Time{}, End}, // nothing left for a group
	} {
		got, ok := ParseName(name)
		if !ok || got.Group != want.Group || got.Kind != want.Kind || got.Life != want.Life {
			t.Errorf("ParseName(%q) = %+v, %v; want %+v", name, got, ok, want)
		}
		if s := got.String(); s != name {
			t.Errorf("ParseName(%q).String() = %q", name, s)
		}
	}
	for _, name := range []string{
		"", ".end", ".begin", "..end", "README", "g.middle", "g.End", "g.end.bak", "g." + stamp0,
		"g." + stamp0 + ".", "g." + stamp0 + ".ended", "." + stamp0 + ".end", ".g." + stamp0 + ".end",
		"a/b." + stamp0 + ".end", strings.Repeat("z", maxGroupLen+1) + "." + stamp0 + ".end",
		"\xff." + stamp0 + ".end", "a\x00." + stamp0 + ".begin",
	} {
		if got, ok := ParseName(name); ok {
			t.Errorf("ParseName(%q) = %+v, want no snapshot name", name, got)
		}
	}
}

func TestIsTemp(t *testing.T) {
	t.Parallel()
	v2 := uid + "." + stamp0 + ".end"
	for name, want := range map[string]bool{
		"." + v2 + ".tmp-1":                 true,
		"." + v2 + ".tmp-4294967295":        true,
		"." + uid + ".end.tmp-12":           true, // a crashed version 1 writer's
		"." + v2 + ".tmp-":                  false,
		"." + v2 + ".tmp-12a":               false,
		v2 + ".tmp-12":                      false,
		".a.tmp-1":                          false,
		"." + uid + "." + stamp0 + ".tmp-1": false,
	} {
		if got := isTemp(name); got != want {
			t.Errorf("isTemp(%q) = %v, want %v", name, got, want)
		}
	}
}

// checkFileName asserts what every name Write can produce satisfies: it parses back to the
// same group, life and kind; it is no temp file, while its temp files are; and Write's temp
// file name fits in a file name.
func checkFileName(t *testing.T, group string, life time.Time, kind Kind) {
	t.Helper()
	name := FileName(group, life, kind)
	n, ok := ParseName(name)
	if !ok || n.Group != group || !n.Life.Equal(life) || n.Life.Location() != time.UTC || n.Kind != kind {
		t.Fatalf("FileName(%q, %v, %s) = %q parses as %+v, %v", group, life, kind, name, n, ok)
	}
	if isTemp(name) {
		t.Fatalf("%q looks like a temp file", name)
	}
	if tmp := "." + name + tempInfix + "4294967295"; !isTemp(tmp) || len(tmp) > 255 {
		t.Fatalf("temp file %q (%d bytes) is not recognised or too long", tmp, len(tmp))
	}
	if strings.Contains(name[len(group):], ":") {
		t.Fatalf("%q has a ':' in its stamp", name)
	}
}

// FuzzParseName: every name ParseName accepts is spelt back the same by String, so a name has
// one reading; and a name of a life (what Write produces) parses back to its parts.
func FuzzParseName(f *testing.F) {
	for _, s := range []string{
		uid + "." + stamp0 + ".end", uid + ".begin", "ctr-web.1.2." + stamp0 + ".begin", "x..end",
		"g.00010101T000000.000000000Z.end", "g.20250230T000000.000000000Z.end", "." + uid + ".end.tmp-1",
		"g." + stamp0 + "." + stamp0 + ".end", stamp0 + ".end", "",
	} {
		f.Add(s, life0.Unix(), int64(life0.Nanosecond()), false)
	}
	f.Add("g", int64(-62135596800), int64(1), true)         // the first instant after the zero time
	f.Add("g", int64(253402300799), int64(999999999), true) // the last of year 9999
	f.Add("g", int64(-62135596800), int64(0), true)         // the zero time: no life
	f.Fuzz(func(t *testing.T, s string, sec, nsec int64, end bool) {
		if n, ok := ParseName(s); ok {
			if n.String() != s {
				t.Fatalf("ParseName(%q) = %+v, spelt %q", s, n, n.String())
			}
			if validName(n.Group) != nil || validKind(n.Kind) != nil || (!n.Life.IsZero() && validTime("life", n.Life) != nil) {
				t.Fatalf("ParseName(%q) = %+v: not a valid name", s, n)
			}
		}
		life := time.Unix(sec, nsec)
		kind := Begin
		if end {
			kind = End
		}
		if validName(s) != nil || validTime("life", life) != nil {
			return
		}
		checkFileName(t, s, life, kind)
	})
}
