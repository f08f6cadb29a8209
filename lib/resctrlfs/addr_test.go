package resctrlfs

import "testing"

func TestAddrPathRoundTrip(t *testing.T) {
	t.Parallel()
	for _, a := range []Addr{{Name: "pod1"}, {Class: "gold", Name: "pod1"}} {
		got, err := ParseAddr(a.Path())
		if err != nil || got != a {
			t.Errorf("ParseAddr(%q) = %+v, %v; want %+v", a.Path(), got, err, a)
		}
	}
	for _, p := range []string{"", "pod1", "mon_groups/", "gold/pod1", "/mon_groups/x", "a/b/mon_groups/x", "gold/mon_groups/"} {
		if a, err := ParseAddr(p); err == nil {
			t.Errorf("ParseAddr(%q) = %+v, want an error", p, a)
		}
	}
}
