package snapshot

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/resctrl-mon/resctrl-mon/lib/clip"
)

// Name is what a snapshot file's name says: whose life and which end of it. A zero Life is a
// version 1 (legacy) name, <group>.<kind>, which has no life.
type Name struct {
	Group string
	Life  time.Time
	Kind  Kind
}

// stampLayout is the life stamp in a file name: fixed width, so names sort by time; UTC, so
// one instant has one spelling; no ':', which some consumers' file systems and tools refuse.
const stampLayout = "20060102T150405.000000000Z"

// stampLen is the width of every stamp: the year is always 4 digits (Life is kept within
// 1..9999, like every time in the format).
const stampLen = len(stampLayout)

// String is the file name: <group>.<life stamp>.<kind>, or <group>.<kind> when Life is zero.
func (n Name) String() string {
	if n.Life.IsZero() {
		return n.Group + "." + string(n.Kind)
	}
	return n.Group + "." + n.Life.UTC().Format(stampLayout) + "." + string(n.Kind)
}

// FileName is the name of the file Write stores group's kind snapshot of the life begun at
// life in.
func FileName(group string, life time.Time, kind Kind) string {
	return Name{Group: group, Life: life, Kind: kind}.String()
}

// ParseName reads a snapshot file's name. It parses from the right, since the group may hold
// dots (container ids do): the kind after the last dot, then the life stamp before it if it
// is one, and the rest is the group. A name without a stamp is a version 1 name (zero Life).
// Whatever ParseName accepts, String spells the same way.
func ParseName(name string) (Name, bool) {
	n, _, ok := parseName(name)
	return n, ok
}

// parseName is ParseName that also returns the stamp as spelt in the name ("" for version 1).
func parseName(name string) (n Name, stamp string, ok bool) {
	rest, kind, ok := cutKind(name)
	if !ok {
		return Name{}, "", false
	}
	if i := len(rest) - stampLen - 1; i > 0 && rest[i] == '.' {
		if life, ok := parseStamp(rest[i+1:]); ok && validName(rest[:i]) == nil {
			return Name{Group: rest[:i], Life: life, Kind: kind}, rest[i+1:], true
		}
	}
	// No stamp: version 1. A group that merely ends in something stamp-like (it would have
	// parsed above) can only have come from a version 1 writer.
	if validName(rest) != nil {
		return Name{}, "", false
	}
	return Name{Group: rest, Kind: kind}, "", true
}

func cutKind(name string) (rest string, kind Kind, ok bool) {
	for _, k := range []Kind{Begin, End} {
		if r, found := strings.CutSuffix(name, "."+string(k)); found {
			return r, k, true
		}
	}
	return "", "", false
}

// parseStamp accepts only the spelling stampLayout produces, so a name has one reading:
// every digit in place (time.Parse alone takes a one-digit hour), then time.Parse for the
// ranges (no 30 February).
func parseStamp(s string) (time.Time, bool) {
	if len(s) != stampLen {
		return time.Time{}, false
	}
	for i := range len(s) {
		want := stampLayout[i]
		if want >= '0' && want <= '9' {
			if s[i] < '0' || s[i] > '9' {
				return time.Time{}, false
			}
		} else if s[i] != want {
			return time.Time{}, false
		}
	}
	t, err := time.Parse(stampLayout, s)
	if err != nil || validTime("life", t) != nil {
		return time.Time{}, false
	}
	return t, true
}

// isTemp reports whether name is one of Write's temp files (of either version's names: a
// crashed writer of version 1 leaves them too).
func isTemp(name string) bool {
	rest, ok := strings.CutPrefix(name, ".")
	if !ok {
		return false
	}
	i := strings.LastIndex(rest, tempInfix)
	if i < 0 {
		return false
	}
	digits := rest[i+len(tempInfix):]
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return false
	}
	_, ok = ParseName(rest[:i])
	return ok
}

// validName refuses group names that are not a single, visible path component.
func validName(name string) error {
	why := ""
	switch {
	case name == "":
		return errors.New("empty group name")
	case name == "." || name == "..":
		why = "is a special directory name"
	case strings.HasPrefix(name, "."):
		why = "starts with '.' (reserved for temp files)"
	case strings.ContainsRune(name, '/'):
		why = "contains '/'"
	case strings.ContainsRune(name, 0):
		why = "contains NUL"
	case len(name) > maxGroupLen:
		why = fmt.Sprintf("is %d bytes, over %d", len(name), maxGroupLen)
	case !utf8.ValidString(name):
		// JSON would store it mangled, so the file name and its content would disagree.
		why = "is not valid UTF-8"
	default:
		return nil
	}
	return fmt.Errorf("invalid group name %q: %s", clip.String(name), why)
}

func validKind(k Kind) error {
	if k != Begin && k != End {
		return fmt.Errorf("kind %q, want %q or %q", clip.String(string(k)), Begin, End)
	}
	return nil
}

// validTime checks a time the format stores: set, and within the years RFC 3339 (hence
// JSON) and the life stamp can hold.
func validTime(what string, t time.Time) error {
	if t.IsZero() {
		return fmt.Errorf("%s missing", what)
	}
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return fmt.Errorf("%s %s out of range", what, t.UTC().Format(time.RFC3339Nano))
	}
	return nil
}
