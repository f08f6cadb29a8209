package psi

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/resctrl-mon/resctrl-mon/lib/clip"
)

// Resource is what tasks stall on; its pressure file is <resource>.pressure.
type Resource string

const (
	CPU    Resource = "cpu"
	Memory Resource = "memory"
	IO     Resource = "io"
)

// Resources lists every resource with a pressure file, in the kernel's order.
func Resources() []Resource { return []Resource{CPU, Memory, IO} }

// File is the name of the resource's pressure file in a cgroup v2 directory.
func (r Resource) File() string { return string(r) + ".pressure" }

// Kind tells the two lines of a pressure file apart.
type Kind string

const (
	Some Kind = "some" // at least one task waited
	Full Kind = "full" // all non-idle tasks waited at once
)

// Line is one line of a pressure file.
type Line struct {
	// Present is false when the file had no such line (cpu "full" before Linux 5.13): the
	// other fields are then meaningless, not zero.
	Present bool
	// Avg10, Avg60 and Avg300 are the kernel's running averages, in percent (0..100).
	Avg10, Avg60, Avg300 float64
	// Total is the cumulative stall time in microseconds since the cgroup was made.
	Total uint64
}

// Seconds is Total in seconds.
func (l Line) Seconds() float64 { return float64(l.Total) / 1e6 }

// Pressure is one pressure file.
type Pressure struct {
	Some, Full Line
}

// Line returns the line of kind k.
func (p Pressure) Line(k Kind) Line {
	if k == Full {
		return p.Full
	}
	return p.Some
}

// ErrFormat is wrapped by every error about a file's content.
var ErrFormat = errors.New("pressure file format")

// maxFileSize bounds what Parse reads: the kernel writes two lines of under 80 bytes.
const maxFileSize = 4096

// Parse reads a pressure file. Lines of a kind it does not know (a later kernel's) and
// key=value pairs it does not know are skipped; a known line must carry avg10, avg60,
// avg300 and total, each once, and appear once. A file with neither line is an error.
func Parse(r io.Reader) (Pressure, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return Pressure{}, err
	}
	if len(b) > maxFileSize {
		return Pressure{}, fmt.Errorf("%w: longer than %d bytes", ErrFormat, maxFileSize)
	}
	var p Pressure
	for line := range strings.Lines(string(b)) {
		kind, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		var dst *Line
		switch Kind(kind) {
		case Some:
			dst = &p.Some
		case Full:
			dst = &p.Full
		default:
			continue
		}
		if dst.Present {
			return Pressure{}, fmt.Errorf("%w: two %q lines", ErrFormat, kind)
		}
		l, err := parseLine(rest)
		if err != nil {
			return Pressure{}, fmt.Errorf("%w: %s line: %w", ErrFormat, kind, err)
		}
		*dst = l
	}
	if !p.Some.Present && !p.Full.Present {
		return Pressure{}, fmt.Errorf("%w: no %q or %q line", ErrFormat, Some, Full)
	}
	return p, nil
}

func parseLine(s string) (Line, error) {
	l := Line{Present: true}
	var seen [4]bool
	for _, kv := range strings.Fields(s) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return Line{}, fmt.Errorf("%q is not key=value", clip.String(kv))
		}
		var i int
		var err error
		switch k {
		case "avg10":
			i = 0
			l.Avg10, err = parseAvg(v)
		case "avg60":
			i = 1
			l.Avg60, err = parseAvg(v)
		case "avg300":
			i = 2
			l.Avg300, err = parseAvg(v)
		case "total":
			i = 3
			l.Total, err = strconv.ParseUint(v, 10, 64)
		default:
			continue
		}
		if err != nil {
			return Line{}, fmt.Errorf("%s: %w", k, err)
		}
		if seen[i] {
			return Line{}, fmt.Errorf("%s given twice", k)
		}
		seen[i] = true
	}
	for i, k := range []string{"avg10", "avg60", "avg300", "total"} {
		if !seen[i] {
			return Line{}, fmt.Errorf("no %s", k)
		}
	}
	return l, nil
}

// parseAvg accepts what the kernel prints (digits, one dot: "12.34"), never a sign, an
// exponent, "inf" or "nan", which strconv.ParseFloat would take.
func parseAvg(v string) (float64, error) {
	digits, dots := 0, 0
	for _, c := range v {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return 0, fmt.Errorf("%q is not a decimal number", clip.String(v))
		}
	}
	if digits == 0 || dots > 1 {
		return 0, fmt.Errorf("%q is not a decimal number", clip.String(v))
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, err
	}
	if f > 100 {
		return 0, fmt.Errorf("%s is more than 100 percent", v)
	}
	return f, nil
}

// Format writes p in the kernel's layout, the lines that are present only. The averages
// are written in their shortest exact form, so Parse(Format(p)) gives p back.
func Format(p Pressure) string {
	var b strings.Builder
	for _, k := range []Kind{Some, Full} {
		l := p.Line(k)
		if !l.Present {
			continue
		}
		fmt.Fprintf(&b, "%s avg10=%s avg60=%s avg300=%s total=%d\n", k,
			formatAvg(l.Avg10), formatAvg(l.Avg60), formatAvg(l.Avg300), l.Total)
	}
	return b.String()
}

func formatAvg(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
