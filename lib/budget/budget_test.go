package budget

import (
	"errors"
	"testing"
	"time"
)

func TestTail(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ total, want time.Duration }{
		{0, 0},
		{400 * time.Millisecond, 100 * time.Millisecond},
		{2 * time.Second, 500 * time.Millisecond},
		{4 * time.Second, time.Second},
		{8 * time.Second, time.Second}, // a long budget goes to the work
	} {
		if got := Tail(tc.total); got != tc.want {
			t.Errorf("Tail(%s) = %s, want %s", tc.total, got, tc.want)
		}
	}
}

func TestBudget(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		total         time.Duration
		deadline, end time.Duration // after start
		passed        string
	}{
		{2 * time.Second, 1500 * time.Millisecond, 2 * time.Second, "1.5s of the 2s budget passed"},
		{8 * time.Second, 7 * time.Second, 8 * time.Second, "7s of the 8s budget passed"},
	} {
		b := Budget{Start: start, Total: tc.total}
		if got := b.Deadline().Sub(start); got != tc.deadline {
			t.Errorf("%s: deadline %s after start, want %s", tc.total, got, tc.deadline)
		}
		if got := b.End().Sub(start); got != tc.end {
			t.Errorf("%s: end %s after start, want %s", tc.total, got, tc.end)
		}
		if got := b.End().Sub(b.Deadline()); got != b.Tail() || got != Tail(tc.total) {
			t.Errorf("%s: %s between the deadline and the end, want the tail %s", tc.total, got, Tail(tc.total))
		}
		if got := b.Passed(); got != tc.passed {
			t.Errorf("%s: %q, want %q", tc.total, got, tc.passed)
		}
	}
}

// Under: the wanted budget where it fits under the limit, else the limit, never under the
// floor.
func TestUnder(t *testing.T) {
	t.Parallel()
	const s, ms = time.Second, time.Millisecond
	for _, tc := range []struct{ want, limit, floor, got time.Duration }{
		{0, 1500 * ms, 100 * ms, 1500 * ms},     // unset: as long as allowed
		{-s, 1500 * ms, 100 * ms, 1500 * ms},    // unset
		{s, 1500 * ms, 100 * ms, s},             // fits
		{8 * s, 1500 * ms, 100 * ms, 1500 * ms}, // too long for the caller's timeout
		{s, -200 * ms, 100 * ms, 100 * ms},      // a timeout under the margin: the floor
		{50 * ms, 1500 * ms, 100 * ms, 100 * ms},
	} {
		if got := Under(tc.want, tc.limit, tc.floor); got != tc.got {
			t.Errorf("Under(%s, %s, %s) = %s, want %s", tc.want, tc.limit, tc.floor, got, tc.got)
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	if !errors.Is(ErrNotStarted, ErrExhausted) {
		t.Error("ErrNotStarted does not wrap ErrExhausted: a caller checking the budget misses it")
	}
	if errors.Is(ErrExhausted, ErrNotStarted) {
		t.Error("work past its budget reads as not started")
	}
}
