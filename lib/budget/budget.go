package budget

import (
	"errors"
	"fmt"
	"time"
)

// ErrExhausted: work outlived the time its caller can be kept waiting.
var ErrExhausted = errors.New("time budget exhausted")

// ErrNotStarted: every worker of a Pool was busy with earlier work that overran its budget,
// so the work was not started at all. It wraps ErrExhausted: the caller's caller gets the
// same answer as for work past its budget, at once.
var ErrNotStarted = fmt.Errorf("%w: not started", ErrExhausted)

// maxTail bounds the tail: a second is enough for a lock-free mark and two log lines with a
// send timeout each, and a long budget should go to the work.
const maxTail = time.Second

// Tail is the end of a budget of total kept back from the work: a quarter, at most a second.
// What follows the wait (marking a pod late, the log lines, each bounded by a share of the
// tail) then ends inside the budget however slow resctrl or syslog are.
func Tail(total time.Duration) time.Duration { return min(total/4, maxTail) }

// Budget is a span of time counted from Start, when the caller's caller began to wait (a
// runtime's timeout counts from the hook's start, not from when its work began).
type Budget struct {
	Start time.Time
	Total time.Duration
}

// Tail is the part of b kept back to report.
func (b Budget) Tail() time.Duration { return Tail(b.Total) }

// Deadline is when the work must have ended: the tail is left.
func (b Budget) Deadline() time.Time { return b.Start.Add(b.Total - b.Tail()) }

// End is when the whole budget, tail included, has passed.
func (b Budget) End() time.Time { return b.Start.Add(b.Total) }

// Passed says how much of b the work was given, for an error past its Deadline.
func (b Budget) Passed() string {
	return fmt.Sprintf("%s of the %s budget passed", b.Total-b.Tail(), b.Total)
}

// Under is the budget of a caller answering someone who gives up at their own timeout:
// want, or limit (that timeout less a margin of the caller's) where want is unset (zero or
// less) or longer, and never under floor, so that work is given a chance to end at all.
func Under(want, limit, floor time.Duration) time.Duration {
	if want <= 0 || want > limit {
		want = limit
	}
	return max(want, floor)
}
