package nriplugin

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// within returns the work's result in time, gives up past its budget while the work goes
// on, runs other work meanwhile, and events one after another reuse one worker.
func TestWithin(t *testing.T) {
	t.Parallel()
	w := newWorkers()
	if v, ok := within(&w, time.Second, func() int { return 7 }); v != 7 || !ok {
		t.Fatalf("got %d, %v", v, ok)
	}
	release, finished := make(chan struct{}), atomic.Bool{}
	if _, ok := within(&w, 20*time.Millisecond, func() int { <-release; finished.Store(true); return 1 }); ok {
		t.Fatal("a stuck job came back within its budget")
	}
	// The stuck job holds its worker: the next one gets another, and answers.
	if v, ok := within(&w, time.Second, func() int { return 8 }); v != 8 || !ok {
		t.Errorf("while another job is stuck: %d, %v", v, ok)
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for !finished.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if !finished.Load() {
		t.Error("the job past its budget did not go on to its end")
	}
	before := runtime.NumGoroutine()
	for i := range 50 {
		if v, ok := within(&w, time.Second, func() int { return i }); v != i || !ok {
			t.Fatalf("job %d: %d, %v", i, v, ok)
		}
	}
	// Parallel tests start goroutines too: a goroutine per job would add 50.
	if grown := runtime.NumGoroutine() - before; grown > 10 {
		t.Errorf("%d more goroutines after 50 jobs one after another", grown)
	}
}
