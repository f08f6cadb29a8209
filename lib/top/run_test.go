package top

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/inventory"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// growing is a Source whose pod's bandwidth grows by step at every read.
type growing struct {
	mu   sync.Mutex
	n    float64
	step float64
}

func (g *growing) Pods(inventory.Options) ([]inventory.Pod, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n += g.step
	return []inventory.Pod{{Path: "mon_groups/u", PodUID: "u", Namespace: "ns", PodName: "p", State: inventory.Active, Created: life,
		Readings: []resctrlfs.Reading{{Domain: "mon_L3_00", Name: resctrlfs.MBMTotal, Value: g.n, Cumulative: true}}}}, nil
}

func TestRunFrames(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	s := NewSampler(&growing{step: 1 << 20}, nil)
	if err := Run(context.Background(), &b, s, Options{Interval: 10 * time.Millisecond, Frames: 3}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "resctrl-mon top "); n != 3 {
		t.Errorf("%d frames, want 3:\n%s", n, out)
	}
	// Every frame, the first included, has a rate: it came from two samples.
	if n := strings.Count(out, "\nns/p  active"); n != 3 || strings.Contains(out, " - ") {
		t.Errorf("want 3 rows with a rate each:\n%s", out)
	}
	if !strings.Contains(out, "note: pressure not read") || strings.Contains(out, ClearScreen) {
		t.Errorf("want the no-pressure note and no escapes in plain frames:\n%s", out)
	}
}

func TestRunEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var b strings.Builder
	if err := Run(ctx, &b, NewSampler(&growing{}, nil), Options{Interval: time.Hour}); err != nil || b.Len() != 0 {
		t.Errorf("cancelled before the first frame: %v, %q; want nil and nothing", err, b.String())
	}
	if err := Run(context.Background(), &b, NewSampler(&growing{}, nil), Options{Frames: -1}); err == nil {
		t.Errorf("-1 frames: no error")
	}
	if err := Run(context.Background(), failing{}, NewSampler(&growing{}, nil), Options{Interval: time.Millisecond, Frames: 1}); err == nil {
		t.Errorf("a write that fails: no error")
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, context.DeadlineExceeded }
