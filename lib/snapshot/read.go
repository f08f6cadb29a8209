package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/resctrl-mon/resctrl-mon/lib/clip"
)

// Read parses one snapshot file. It is a parser of outside input: size-limited (1 MiB:
// bigger is an error naming the size), unknown fields allowed (forward compatibility), but
// version must be 2 (with a life) or 1 (written before lives were told apart: Life is zero),
// kind begin/end, group a valid name matching the file name when read via ReadFile; clear
// errors naming what was wrong, never a panic.
//
// Time and Life are returned in UTC, Readings is never nil, and an empty Unavailable is nil.
func Read(r io.Reader) (Snapshot, error) {
	s, err := decode(r)
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot: %w", err)
	}
	return s, nil
}

// ReadFile reads the snapshot at path and checks that its name is the one Write gives its
// content (FileName: <group>.<life stamp>.<kind>; <group>.<kind> for version 1), so a file
// renamed by hand is not taken for another group's or another life's.
func ReadFile(path string) (Snapshot, error) {
	s, err := readFile(path)
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot: read %s: %w", path, err)
	}
	return s, nil
}

func readFile(path string) (Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return Snapshot{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Snapshot{}, err
	}
	if !fi.Mode().IsRegular() {
		return Snapshot{}, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	// Name the real size when we know it; decode still limits what it reads, in case the
	// file grows after the stat.
	if fi.Size() > maxSize {
		return Snapshot{}, fmt.Errorf("file is %d bytes, over the %d-byte limit", fi.Size(), maxSize)
	}
	s, err := decode(f)
	if err != nil {
		return Snapshot{}, err
	}
	if want, got := FileName(s.Group, s.Life, s.Kind), filepath.Base(path); got != want {
		return Snapshot{}, fmt.Errorf("file name %q does not match its group %q, life and kind %q (want %q)",
			clip.String(got), clip.String(s.Group), s.Kind, clip.String(want))
	}
	return s, nil
}

func decode(r io.Reader) (Snapshot, error) {
	// One byte over the limit tells "exactly 1 MiB" from "more".
	data, err := io.ReadAll(io.LimitReader(r, maxSize+1))
	if err != nil {
		return Snapshot{}, fmt.Errorf("read: %w", err)
	}
	if len(data) > maxSize {
		return Snapshot{}, fmt.Errorf("input is over the %d-byte limit", maxSize)
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return Snapshot{}, errors.New("empty input")
	}
	// json.Unmarshal would accept null as "nothing to do" and report an array in Go type
	// terms; say plainly what a snapshot must be.
	if trimmed[0] != '{' {
		return Snapshot{}, fmt.Errorf("not a JSON object (starts with %q)", clip.String(string(trimmed[:min(len(trimmed), 20)])))
	}
	// life is decoded apart: version 1 did not define it, so in a version 1 file it is an
	// unknown field, ignored whatever it holds.
	var w struct {
		Snapshot
		Life json.RawMessage `json:"life"` // shadows Snapshot.Life
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return Snapshot{}, fmt.Errorf("invalid JSON: %w", err)
	}
	s := w.Snapshot
	if s.Version == version && len(w.Life) > 0 {
		if err := json.Unmarshal(w.Life, &s.Life); err != nil {
			return Snapshot{}, fmt.Errorf("life: %w", err)
		}
	}
	s.Time, s.Life = s.Time.UTC(), s.Life.UTC()
	if s.Readings == nil {
		s.Readings = []Reading{}
	}
	if len(s.Unavailable) == 0 {
		s.Unavailable = nil
	}
	if err := validate(&s); err != nil {
		return Snapshot{}, err
	}
	return s, nil
}
