package budget

import (
	"errors"
	"testing"
	"time"
)

// Run, on a goroutine of its own and on a pool: work that ends is answered with its value;
// work that does not end in time goes on to its end in the background. No timing is asserted:
// work that must be late blocks until the test releases it, work that must be in time has an
// hour.
func TestRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		pool func() *Pool
	}{
		{"goroutine", func() *Pool { return nil }},
		{"pool", func() *Pool { return NewPool(2, time.Minute) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := tc.pool()
			if v, err := Run(p, time.Hour, func() int { return 7 }); v != 7 || err != nil {
				t.Fatalf("work in time: %d, %v; want 7, nil", v, err)
			}
			release, ended := make(chan struct{}), make(chan int, 1)
			v, err := Run(p, time.Millisecond, func() int { <-release; ended <- 8; return 8 })
			if err != ErrExhausted || v != 0 { //nolint:errorlint // the bare sentinel is the contract
				t.Fatalf("work past its budget: %d, %v; want 0, ErrExhausted itself", v, err)
			}
			// Meanwhile other work runs (on a pool: another worker).
			if v, err := Run(p, time.Hour, func() int { return 9 }); v != 9 || err != nil {
				t.Errorf("while other work is late: %d, %v; want 9, nil", v, err)
			}
			close(release)
			if got := <-ended; got != 8 {
				t.Errorf("the late work ended with %d", got)
			}
		})
	}
}

// A pool runs at most its max at once: past it, work is refused at once and never runs.
// Once a worker is free again, work runs.
func TestPoolBounded(t *testing.T) {
	t.Parallel()
	p := NewPool(1, time.Minute)
	release, ended := make(chan struct{}), make(chan struct{})
	if _, err := Run(p, 0, func() int { <-release; close(ended); return 0 }); !errors.Is(err, ErrExhausted) {
		t.Fatalf("work that hangs: %v", err)
	}
	if p.Busy() != 1 || p.Live() != 1 || p.Max() != 1 {
		t.Errorf("%d busy, %d live, max %d; want 1, 1, 1", p.Busy(), p.Live(), p.Max())
	}
	ran := false
	_, err := Run(p, time.Hour, func() int { ran = true; return 0 })
	if err != ErrNotStarted { //nolint:errorlint // the bare sentinel is the contract
		t.Fatalf("work past the pool's bound: %v; want ErrNotStarted itself", err)
	}
	close(release)
	<-ended
	if v, err := Run(p, time.Hour, func() int { return 3 }); v != 3 || err != nil {
		t.Errorf("once the worker is free: %d, %v", v, err)
	}
	if ran {
		t.Error("refused work ran")
	}
}

// Work handed to a pool one after another reuses its one worker: a worker is idle before it
// hands its result over, so the next work finds it.
func TestPoolReuses(t *testing.T) {
	t.Parallel()
	p := NewPool(4, time.Minute)
	for i := range 100 {
		if v, err := Run(p, time.Hour, func() int { return i }); v != i || err != nil {
			t.Fatalf("work %d: %d, %v", i, v, err)
		}
	}
	if p.Live() != 1 || p.Busy() != 0 {
		t.Errorf("%d workers, %d busy after work one after another; want 1, 0", p.Live(), p.Busy())
	}
}
