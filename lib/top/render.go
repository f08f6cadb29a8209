package top

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ClearScreen moves the cursor home and clears the terminal: a redraw without curses.
const ClearScreen = "\x1b[H\x1b[2J"

// RenderOptions shape a frame's text.
type RenderOptions struct {
	Sort SortKey
	// ANSI clears the screen before the frame (a terminal); otherwise frames follow each
	// other, a blank line apart, for scripts and logs.
	ANSI bool
	// Note is said in the header (e.g. why there is no pressure).
	Note string
}

// Columns are the header's names, in order.
var Columns = []string{"POD", "STATE", "MEM BW", "LLC", "ENERGY", "CPU%", "MEM%", "IO%"}

// Render writes f as a table.
func Render(w io.Writer, f Frame, o RenderOptions) error {
	var b strings.Builder
	if o.ANSI {
		b.WriteString(ClearScreen)
	}
	fmt.Fprintf(&b, "resctrl-mon top  %s  interval %s  sort %s  %d pods\n", f.At.UTC().Format(time.RFC3339),
		f.Interval.Round(time.Millisecond), o.Sort, len(f.Rows))
	if o.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", o.Note)
	}
	rows := make([][]string, 0, len(f.Rows)+1)
	rows = append(rows, Columns)
	for _, r := range f.Rows {
		rows = append(rows, []string{r.Name, string(r.State), bytesCell(r.BW, "/s"), bytesCell(r.LLC, ""),
			numCell(r.Energy, 1, " W"), numCell(r.CPU, 1, ""), numCell(r.Memory, 1, ""), numCell(r.IO, 1, "")})
	}
	table(&b, rows, 2)
	if f.Err != nil {
		fmt.Fprintf(&b, "warning: %s\n", oneLine(f.Err.Error()))
	}
	if !o.ANSI {
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// table writes rows in columns two spaces apart: the first left columns left-aligned (names),
// the others right-aligned (numbers), no trailing blanks.
func table(b *strings.Builder, rows [][]string, left int) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r {
			if i > 0 {
				line.WriteString("  ")
			}
			if i < left {
				fmt.Fprintf(&line, "%-*s", widths[i], c)
			} else {
				fmt.Fprintf(&line, "%*s", widths[i], c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteString("\n")
	}
}

// bytesCell prints bytes in binary units (the kernel's cache sizes are).
func bytesCell(c Cell, suffix string) string {
	switch c.Kind {
	case None:
		return ""
	case Skip:
		return "-"
	case Unassigned:
		return "unassigned"
	}
	return FormatBytes(c.V) + suffix
}

func numCell(c Cell, prec int, suffix string) string {
	switch c.Kind {
	case None:
		return ""
	case Skip:
		return "-"
	}
	return strconv.FormatFloat(c.V, 'f', prec, 64) + suffix
}

// FormatBytes prints n bytes with a binary unit and three significant digits or so:
// 512B, 1.50KiB, 23.4MiB, 118GiB.
func FormatBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	switch {
	case i == 0:
		return strconv.FormatFloat(n, 'f', 0, 64) + units[i]
	case n < 10:
		return strconv.FormatFloat(n, 'f', 2, 64) + units[i]
	case n < 100:
		return strconv.FormatFloat(n, 'f', 1, 64) + units[i]
	}
	return strconv.FormatFloat(n, 'f', 0, 64) + units[i]
}

// oneLine keeps a warning on one line of bounded length: a joined error has one per failure.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", "; ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
