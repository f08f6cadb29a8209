package resctrlsim

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// assignOp is one "<event>:<domain>=<state>" of a write to mbm_L3_assignments.
type assignOp struct {
	ev       mbmEvent
	domain   int    // a domain id, or -1 for '*': every domain
	state    string // what follows '=', checked when the op is applied
	hasState bool   // false when there was no '=' (the kernel then prints "(null)")
}

// String is the op as the kernel's "Assign operation '%s:%ld=%s' failed" prints it.
func (op assignOp) String() string {
	dom := "*"
	if op.domain >= 0 {
		dom = strconv.Itoa(op.domain)
	}
	state := op.state
	if !op.hasState {
		state = "(null)"
	}
	return mbmEventNames[op.ev] + ":" + dom + "=" + state
}

// assignParseError is a write the kernel refuses before applying what follows: errno and
// the line it adds to last_cmd_status.
type assignParseError struct {
	errno syscall.Errno
	msg   string
}

func (e *assignParseError) Error() string { return e.msg }

// parseAssignments reads the text of a write to mbm_L3_assignments (its trailing newline
// removed) the way mbm_L3_assignments_write() and resctrl_parse_mbm_assignment() do, and
// returns the operations found before the first error, in order; the caller applies them and
// reports the error only if they all succeeded, which is what the kernel, parsing and
// applying in one pass, does.
//
// The kernel's rules, kept here to the letter: lines are split at '\n'; a line is
// "<event>:" followed by ';'-separated "<id>=<state>" items, each trimmed of white space
// (strim); the event must match exactly ("Invalid event %s", ENOENT); a line with no ':' or
// nothing after it does nothing; an id starting with '*' applies to every domain and ends the
// line (whatever follows is ignored); any other id must be a decimal number ("Missing domain
// id", EINVAL) of an existing domain ("Invalid domain id %ld", EINVAL).
func parseAssignments(text string, domains int) ([]assignOp, *assignParseError) {
	var ops []assignOp
	for _, line := range strings.Split(text, "\n") {
		event, rest, hasRest := strings.Cut(line, ":")
		ev, ok := mbmEventByName(event)
		if !ok {
			return ops, &assignParseError{syscall.ENOENT, "Invalid event " + event}
		}
		for hasRest && rest != "" {
			var item string
			item, rest, hasRest = strings.Cut(rest, ";")
			id, state, hasState := strings.Cut(kernelTrim(item), "=")
			op := assignOp{ev: ev, domain: -1, state: state, hasState: hasState}
			if strings.HasPrefix(id, "*") {
				ops = append(ops, op)
				break
			}
			n, ok := kstrtoul(id)
			if !ok {
				return ops, &assignParseError{syscall.EINVAL, "Missing domain id"}
			}
			if n >= uint64(domains) {
				return ops, &assignParseError{syscall.EINVAL, fmt.Sprintf("Invalid domain id %d", int64(n))}
			}
			op.domain = int(n)
			ops = append(ops, op)
		}
	}
	return ops, nil
}

// kernelTrim is the kernel's strim(): leading and trailing isspace() characters, which in
// the kernel's ctype table include 0xa0.
func kernelTrim(s string) string {
	isSpace := func(c byte) bool {
		switch c {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0xa0:
			return true
		}
		return false
	}
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// kstrtoul is the kernel's kstrtoul(s, 10, ...): an optional '+', decimal digits only (no
// sign, no 0x, no spaces), no overflow, and one trailing newline allowed.
func kstrtoul(s string) (uint64, bool) {
	s = strings.TrimPrefix(s, "+")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return 0, false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}
