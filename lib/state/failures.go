package state

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Failure is one recorded failure: status shows recent ones by reason, so a pod that could
// not be placed is visible, never just absent.
type Failure struct {
	Time    time.Time `json:"time"`
	Reason  string    `json:"reason"`        // identity, create, assign, remove, ...
	Subject string    `json:"subject"`       // the container id, or the group when no container is involved
	Pod     string    `json:"pod,omitempty"` // the pod's UID (or group) when known
	Error   string    `json:"error"`
}

const (
	failuresFile = "failures.jsonl"
	// maxFailuresSize bounds the log: when it is reached the log starts over, keeping the
	// previous one as failures.jsonl.1.
	maxFailuresSize = 256 << 10
)

// RecordFailure appends a failure. One short O_APPEND write, so lines from concurrent hooks
// never interleave.
func (s *Store) RecordFailure(f Failure) error {
	path := filepath.Join(s.dir, failuresFile)
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxFailuresSize {
		_ = os.Rename(path, path+".1")
	}
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("record failure: %w", err)
	}
	fh, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("record failure: %w", err)
	}
	line := append(b, '\n')
	if tornTail(fh) {
		// A write cut short (tmpfs full) left a line without its end: this one must not
		// be glued to it, or it is lost with it.
		line = append([]byte{'\n'}, line...)
	}
	_, werr := fh.Write(line)
	return errors.Join(werr, fh.Close())
}

// tornTail reports whether the file does not end with a newline.
func tornTail(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return false
	}
	last := make([]byte, 1)
	_, err = f.ReadAt(last, fi.Size()-1)
	return err == nil && last[0] != '\n'
}

// Failures returns the recorded failures since t, oldest first; unparsable lines are skipped.
func (s *Store) Failures(since time.Time) ([]Failure, error) {
	var out []Failure
	for _, name := range []string{failuresFile + ".1", failuresFile} {
		f, err := os.Open(filepath.Join(s.dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("read failures: %w", err)
		}
		// Not a bufio.Scanner: a line longer than its buffer would end the reading there, and
		// every later failure would go unseen.
		r := bufio.NewReader(f)
		for {
			line, rerr := r.ReadBytes('\n')
			var fl Failure
			if json.Unmarshal(line, &fl) == nil && !fl.Time.Before(since) {
				out = append(out, fl)
			}
			if rerr != nil {
				_ = f.Close()
				if !errors.Is(rerr, io.EOF) {
					return out, fmt.Errorf("read failures: %w", rerr)
				}
				break
			}
		}
	}
	return out, nil
}
