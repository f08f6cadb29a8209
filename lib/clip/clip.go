// Package clip shortens outside input quoted in error messages. What a runtime, a file or a
// flag hands the hook, the wrapper or a parser may be huge or garbage; a message that refuses
// it should still fit on a line of a log, so every package that quotes such a value (%q)
// quotes String(value).
package clip

import "unicode/utf8"

// Max is how many bytes of a value a message keeps.
const Max = 80

// Ellipsis marks a clipped value.
const Ellipsis = "..."

// String returns s, or its first Max bytes followed by Ellipsis when it is longer. The cut is
// moved back to the start of a UTF-8 sequence (by less than utf8.UTFMax bytes: garbage may be
// all continuation bytes), so a clipped valid string stays valid (%q then shows the
// characters, not half of one as \x escapes).
func String(s string) string {
	if len(s) <= Max {
		return s
	}
	n := Max
	for n > Max-utf8.UTFMax+1 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + Ellipsis
}
