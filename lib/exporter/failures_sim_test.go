package exporter_test

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Every failure a front end records is counted once, as outcomes are: one stamped before
// the last scrape but written after it (two hooks racing), and all of a burst that rotates
// the failures log more than once between two scrapes.
func TestFailuresCountedEveryOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	t2 := time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC)
	e.m.SetClock(func() time.Time { return t2 })
	_ = e.m.Refuse("c1", errors.New("first"))
	if got := one(t, e.gather(t), "resctrl_mon_failures_total", "reason=identity"); got != 1 {
		t.Fatalf("after one failure: %v", got)
	}
	e.m.SetClock(func() time.Time { return t2.Add(-time.Second) })
	_ = e.m.Refuse("c2", errors.New("stamped before the scrape, written after it"))
	if got := one(t, e.gather(t), "resctrl_mon_failures_total", "reason=identity"); got != 2 {
		t.Errorf("a failure stamped before the last scrape: failures_total %v, want 2", got)
	}
	e.m.SetClock(func() time.Time { return t2.Add(time.Second) })
	const burst = 3000 // ~700 KB of log: rotated twice
	long := errors.New(strings.Repeat("e", 200))
	for range burst {
		_ = e.m.Refuse("c3", long)
	}
	if got := one(t, e.gather(t), "resctrl_mon_failures_total", "reason=identity"); got != 2+burst {
		t.Errorf("after a burst that rotated the log twice: failures_total %v, want %d", got, 2+burst)
	}
}
