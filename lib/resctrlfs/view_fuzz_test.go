package resctrlfs_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// FuzzParseNumRMIDs: a count is taken only when positive, and is the number the file says.
func FuzzParseNumRMIDs(f *testing.F) {
	for _, s := range []string{"256\n", "0", "-1", "+8", " 7 ", "1e3", "99999999999999999999", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, ok := resctrlfs.ParseNumRMIDs(b)
		if !ok {
			return
		}
		if n <= 0 {
			t.Fatalf("%q taken as %d", b, n)
		}
		want, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(string(b)), "+"), 10, 64)
		if err != nil || want != int64(n) {
			t.Errorf("%q taken as %d", b, n)
		}
	})
}
