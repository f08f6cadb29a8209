package top

import (
	"context"
	"fmt"
	"io"
	"time"
)

// DefaultInterval is the time between two frames.
const DefaultInterval = 2 * time.Second

// Options shape Run.
type Options struct {
	Interval time.Duration // between samples; DefaultInterval when 0
	// Frames is how many frames to show before returning; 0 runs until ctx is done.
	Frames int
	Sort   SortKey // SortBW when ""
	ANSI   bool    // clear and redraw (a terminal)
}

// Run shows a frame every interval until ctx is done or opts.Frames were shown. The first
// frame comes one interval after the start: it needs a second sample for its rates. A
// cancelled ctx is a normal end (nil); a failed write is returned.
func Run(ctx context.Context, w io.Writer, s *Sampler, o Options) error {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Sort == "" {
		o.Sort = SortBW
	}
	if o.Frames < 0 {
		return fmt.Errorf("top: %d frames: want 0 (no end) or more", o.Frames)
	}
	prev := s.Sample()
	if o.ANSI {
		// Someone at a terminal sees why nothing shows yet.
		fmt.Fprintf(w, "%sresctrl-mon top: sampling, first frame in %s\n", ClearScreen, o.Interval)
	}
	t := time.NewTicker(o.Interval)
	defer t.Stop()
	for n := 0; o.Frames == 0 || n < o.Frames; n++ {
		select {
		case <-ctx.Done():
			return nil // the user's ^C, or the caller's deadline: the end, not a failure
		case <-t.C:
		}
		cur := s.Sample()
		f := NewFrame(prev, cur)
		Sort(f.Rows, o.Sort)
		if err := Render(w, f, RenderOptions{Sort: o.Sort, ANSI: o.ANSI, Note: s.NoPSI}); err != nil {
			return fmt.Errorf("top: write frame: %w", err)
		}
		prev = cur
	}
	return nil
}
