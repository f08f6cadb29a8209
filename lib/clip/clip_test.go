package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", Max)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"short", "k8s_app", "k8s_app"},
		{"exactly Max", long, long},
		{"one over", long + "b", long + Ellipsis},
		{"far over", long + strings.Repeat("b", 1<<20), long + Ellipsis},
		// "é" is 2 bytes: Max-1 a's and an é end at Max+1, so the é goes whole.
		{"rune across the cut", long[:Max-1] + "é" + "z", long[:Max-1] + Ellipsis},
		{"rune ending at the cut", long[:Max-2] + "é" + "z", long[:Max-2] + "é" + Ellipsis},
		{"garbage of continuation bytes", strings.Repeat("\xbc", 200), strings.Repeat("\xbc", Max-utf8.UTFMax+1) + Ellipsis},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := String(tc.in); got != tc.want {
				t.Errorf("String(%d bytes) = %q, want %q", len(tc.in), got, tc.want)
			}
		})
	}
}

// FuzzString checks what callers rely on: a short value is kept as it is; a long one becomes
// a prefix of itself, at most Max bytes, marked with Ellipsis, losing at most one character's
// worth of bytes before Max; and a valid UTF-8 value stays valid.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "abc", strings.Repeat("x", Max+1), strings.Repeat("é", Max), strings.Repeat("\xff", 200), strings.Repeat("日本", 30)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := String(s)
		if len(s) <= Max {
			if got != s {
				t.Fatalf("String(%q) = %q, want it unchanged", s, got)
			}
			return
		}
		kept, ok := strings.CutSuffix(got, Ellipsis)
		if !ok || !strings.HasPrefix(s, kept) {
			t.Fatalf("String(%q) = %q, want a prefix of it and %q", s, got, Ellipsis)
		}
		if len(kept) > Max || len(kept) < Max-utf8.UTFMax+1 {
			t.Fatalf("String keeps %d bytes, want %d to %d", len(kept), Max-utf8.UTFMax+1, Max)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("String(%q) = %q, not valid UTF-8", s, got)
		}
	})
}
