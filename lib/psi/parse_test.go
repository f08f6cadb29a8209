package psi

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// Read from this machine's kernel (6.18): /proc/pressure/cpu and io.
const (
	kernelCPU = "some avg10=95.30 avg60=89.03 avg300=64.55 total=407726019\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	kernelIO  = "some avg10=0.89 avg60=1.19 avg300=1.33 total=15961145\nfull avg10=0.00 avg60=0.00 avg300=0.15 total=7168173\n"
	// A cgroup's cpu.pressure before Linux 5.13: no full line.
	oldCPU = "some avg10=1.50 avg60=0.75 avg300=0.20 total=385\n"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in   string
		some, full Line
	}{
		{"kernel cpu", kernelCPU,
			Line{true, 95.30, 89.03, 64.55, 407726019}, Line{true, 0, 0, 0, 0}},
		{"kernel io", kernelIO,
			Line{true, 0.89, 1.19, 1.33, 15961145}, Line{true, 0, 0, 0.15, 7168173}},
		{"no full line", oldCPU, Line{true, 1.5, 0.75, 0.2, 385}, Line{}},
		{"full line only (irq.pressure)", "full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n", Line{}, Line{true, 0, 0, 0, 7}},
		{"no final newline, keys reordered", "some total=9 avg300=1 avg60=2 avg10=3",
			Line{true, 3, 2, 1, 9}, Line{}},
		{"a later kernel's keys and lines are skipped", "some avg10=1.00 avg60=0.00 avg300=0.00 total=1 max=7\nnone x=1\n",
			Line{true, 1, 0, 0, 1}, Line{}},
		{"largest total", "some avg10=100.00 avg60=0 avg300=0 total=18446744073709551615\n",
			Line{true, 100, 0, 0, math.MaxUint64}, Line{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Parse(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if p.Some != tc.some || p.Full != tc.full {
				t.Errorf("got some %+v full %+v, want %+v %+v", p.Some, p.Full, tc.some, tc.full)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"",
		"\n\n",
		"hello\n",
		"some\n",
		"some avg10=1.00 avg60=1.00 avg300=1.00\n",                            // no total
		"some avg10=1.00 avg60=1.00 total=1\n",                                // no avg300
		"some avg10=1.00 avg10=1.00 avg60=1.00 avg300=1.00 total=1\n",         // twice
		"some avg10=1.00 avg60=1.00 avg300=1.00 total=-1\n",                   // negative total
		"some avg10=-1.00 avg60=1.00 avg300=1.00 total=1\n",                   // negative average
		"some avg10=100.01 avg60=1.00 avg300=1.00 total=1\n",                  // above 100%
		"some avg10=NaN avg60=1.00 avg300=1.00 total=1\n",                     // ParseFloat would take it
		"some avg10=1e1 avg60=1.00 avg300=1.00 total=1\n",                     // and this
		"some avg10=1..0 avg60=1.00 avg300=1.00 total=1\n",                    //
		"some avg10=. avg60=1.00 avg300=1.00 total=1\n",                       //
		"some avg10=1.00 avg60=1.00 avg300=1.00 total=18446744073709551616\n", // overflows
		"some avg10=1.00 avg60 avg300=1.00 total=1\n",                         // not key=value
		oldCPU + oldCPU, // two some lines
		strings.Repeat(" ", maxFileSize) + oldCPU, // too long
	} {
		p, err := Parse(strings.NewReader(in))
		if err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", in, p)
		} else if !errors.Is(err, ErrFormat) {
			t.Errorf("Parse(%q): %v does not wrap ErrFormat", in, err)
		}
	}
}

func TestFormat(t *testing.T) {
	t.Parallel()
	p, err := Parse(strings.NewReader(oldCPU))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Format(p), "some avg10=1.5 avg60=0.75 avg300=0.2 total=385\n"; got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
	if got := Format(Pressure{}); got != "" {
		t.Errorf("Format of nothing = %q", got)
	}
}

// FuzzParse checks what holds for any input: no panic; when Parse accepts, totals are
// whole microseconds, averages are within 0..100, an absent line is all zero and never
// marked present, a present one was in the input, and formatting what was parsed parses
// back to the same value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{kernelCPU, kernelIO, oldCPU, "full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n",
		"some avg10=1e1 avg60=1.00 avg300=1.00 total=1\n", "some total=9 avg300=1 avg60=2 avg10=3", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(strings.NewReader(string(b)))
		if err != nil {
			if p != (Pressure{}) {
				t.Fatalf("error %v with a value %+v", err, p)
			}
			return
		}
		if !p.Some.Present && !p.Full.Present {
			t.Fatalf("accepted %q with no line", b)
		}
		for _, k := range []Kind{Some, Full} {
			l := p.Line(k)
			if !l.Present {
				if l != (Line{}) {
					t.Fatalf("absent %s line has values %+v", k, l)
				}
				continue
			}
			if !strings.Contains(string(b), string(k)) {
				t.Fatalf("%s line present but not in %q", k, b)
			}
			for _, a := range []float64{l.Avg10, l.Avg60, l.Avg300} {
				if !(a >= 0 && a <= 100) {
					t.Fatalf("%s average %v out of 0..100 from %q", k, a, b)
				}
			}
			if s := l.Seconds(); s < 0 || math.IsNaN(s) {
				t.Fatalf("%s total %v seconds", k, s)
			}
		}
		again, err := Parse(strings.NewReader(Format(p)))
		if err != nil || again != p {
			t.Fatalf("round trip of %+v: %q parsed to %+v, %v", p, Format(p), again, err)
		}
	})
}
