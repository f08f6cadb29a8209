package hooksd

import (
	"strconv"
	"testing"
)

// ParseTimeout takes a flag's or a make variable's text: whatever it accepts is in range and
// written back as the very text it was given (no sign, no leading zero, no space), so the
// hooks.d file says what the operator typed.
func FuzzParseTimeout(f *testing.F) {
	for _, s := range []string{"3", "30", "3600", "2", "3601", "030", "+30", "-3", " 30", "30s", "", "1e2", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseTimeout(s)
		if err != nil {
			if n != 0 {
				t.Errorf("ParseTimeout(%q) = %d with error %v", s, n, err)
			}
			return
		}
		if n < MinTimeout || n > MaxTimeout {
			t.Errorf("ParseTimeout(%q) = %d, outside %d..%d", s, n, MinTimeout, MaxTimeout)
		}
		if back := strconv.Itoa(n); back != s {
			t.Errorf("ParseTimeout(%q) = %d, which reads back as %q", s, n, back)
		}
	})
}
