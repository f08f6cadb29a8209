package config

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"iter"
)

// entries splits a file YAML cannot read into its top-level entries, by indentation alone,
// as YAML's block structure does: an entry starts at a line indented no deeper than the
// entry before it started (a document indented throughout has its entries at that depth),
// and holds every deeper line after it (a value on the next line, a block scalar, a nested
// mapping), the ': value' line of an explicit '? key', and comments and blank lines. A
// document marker or a directive ends an entry. A line starting with a tab is never an
// entry's start (YAML refuses tabs as indentation). Lines over maxLineBytes are cut there
// and an entry stops growing at maxEntryBytes: the file is read in bounded memory whatever
// its size.
func entries(r io.Reader) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		br := bufio.NewReaderSize(r, maxLineBytes)
		var cur []byte
		curIndent, explicitKey := 0, false
		flush := func() bool {
			e := cur
			cur = nil
			return e == nil || yield(e)
		}
		for {
			line, err := readLine(br)
			if len(line) > 0 {
				body := bytes.TrimLeft(line, " ")
				indent := len(line) - len(body)
				trimmed := bytes.TrimSpace(body)
				switch {
				case len(trimmed) == 0 || trimmed[0] == '#' || body[0] == '\t':
					// Part of whatever entry is open, or of none.
				case indent == 0 && (marker(body, "---") || marker(body, "...") || body[0] == '%'):
					if !flush() {
						return
					}
					continue
				case cur != nil && (indent > curIndent || indent == curIndent && explicitKey && marker(body, ":")):
				default:
					if !flush() {
						return
					}
					curIndent, explicitKey = indent, marker(body, "?")
				}
				if (cur != nil || (len(trimmed) > 0 && trimmed[0] != '#' && body[0] != '\t')) && len(cur)+len(line) <= maxEntryBytes {
					cur = append(cur, line...)
				}
			}
			if err != nil {
				flush()
				return
			}
		}
	}
}

// marker says whether a line starts with the indicator s followed by a space or its end.
func marker(body []byte, s string) bool {
	rest, ok := bytes.CutPrefix(body, []byte(s))
	return ok && (len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r' || rest[0] == '\n')
}

// readLine is the next line with its newline, cut at maxLineBytes (the rest of a longer
// line is skipped); the error is io.EOF at the end, or the reader's.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	out := append([]byte(nil), line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = br.ReadSlice('\n')
		if err == nil {
			out = append(out, '\n')
		}
	}
	return out, err
}
