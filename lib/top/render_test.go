package top

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRender(t *testing.T) {
	t.Parallel()
	f := Frame{At: t0, Interval: 2 * time.Second, Rows: []Row{
		{Name: "shop/cart-7d4b9c", State: "active", BW: value(1.5 * (1 << 30)), LLC: value(12 << 20), Energy: value(14.96), CPU: value(97.25), Memory: value(0), IO: value(0.04)},
		{Name: "6a1f3c2e-0000-4000-8000-00000000000b", State: "late-assigned", BW: Cell{Kind: Skip}, LLC: value(512), CPU: Cell{Kind: Skip}},
		{Name: "shop/batch-1", State: "active", BW: Cell{Kind: Unassigned}, LLC: value(1 << 20)},
	}}
	var b strings.Builder
	if err := Render(&b, f, RenderOptions{Sort: SortBW}); err != nil {
		t.Fatal(err)
	}
	want := `resctrl-mon top  2026-12-03T04:00:00Z  interval 2s  sort bw  3 pods
POD                                   STATE              MEM BW      LLC  ENERGY  CPU%  MEM%  IO%
shop/cart-7d4b9c                      active          1.50GiB/s  12.0MiB  15.0 W  97.2   0.0  0.0
6a1f3c2e-0000-4000-8000-00000000000b  late-assigned           -     512B             -
shop/batch-1                          active         unassigned  1.00MiB

`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestRenderModes(t *testing.T) {
	t.Parallel()
	f := Frame{At: t0, Interval: time.Second, Err: errors.New("record x: bad\nrecord y: bad")}
	var plain, ansi strings.Builder
	if err := Render(&plain, f, RenderOptions{Sort: SortName, Note: "no PSI"}); err != nil {
		t.Fatal(err)
	}
	if err := Render(&ansi, f, RenderOptions{Sort: SortName, ANSI: true}); err != nil {
		t.Fatal(err)
	}
	p := plain.String()
	if strings.Contains(p, "\x1b") || !strings.HasSuffix(p, "\n\n") {
		t.Errorf("plain frame has escapes or no blank line after it: %q", p)
	}
	for _, w := range []string{"note: no PSI\n", "warning: record x: bad; record y: bad\n", "0 pods"} {
		if !strings.Contains(p, w) {
			t.Errorf("plain frame lacks %q:\n%s", w, p)
		}
	}
	if a := ansi.String(); !strings.HasPrefix(a, ClearScreen) || strings.HasSuffix(a, "\n\n") {
		t.Errorf("terminal frame does not start by clearing the screen, or ends with a blank line: %q", a)
	}
}

func TestFormatBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    float64
		want string
	}{
		{0, "0B"}, {1023, "1023B"}, {1024, "1.00KiB"}, {1536, "1.50KiB"}, {10 << 20, "10.0MiB"},
		{100 << 30, "100GiB"}, {1 << 50, "1.00PiB"}, {1 << 60, "1024PiB"},
	} {
		if got := FormatBytes(tc.n); got != tc.want {
			t.Errorf("FormatBytes(%v) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
