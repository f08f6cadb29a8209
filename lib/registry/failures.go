package registry

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
	// rotateWait bounds the wait for another writer's rotation: a rename, microseconds.
	rotateWait = time.Second
)

// RecordFailure appends a failure. One short O_APPEND write, so lines from concurrent hooks
// never interleave.
func (s *Store) RecordFailure(f Failure) error {
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("record failure: %w", err)
	}
	path := filepath.Join(s.dir, failuresFile)
	fh, err := openFailures(path)
	if err != nil {
		return fmt.Errorf("record failure: %w", err)
	}
	if fi, err := fh.Stat(); err == nil && fi.Size() > maxFailuresSize {
		rerr := s.rotateFailures(path, fi)
		_ = fh.Close()
		if fh, err = openFailures(path); err != nil {
			return fmt.Errorf("record failure: %w", errors.Join(rerr, err))
		}
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

func openFailures(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
}

// rotateFailures renames the full log, which full is the stat of, to failures.jsonl.1.
// Writers that find it full at the same time take turns under a lock, and only one whose
// path still names the full log renames it: the others would rename the fresh log over the
// rotated one, losing it.
func (s *Store) rotateFailures(path string, full os.FileInfo) error {
	l, err := s.lockFile(path+".lock", rotateWait)
	if err != nil {
		return fmt.Errorf("rotate %s: %w", path, err)
	}
	defer func() { _ = l.unlock() }()
	if now, err := os.Stat(path); err != nil || !os.SameFile(now, full) {
		return nil // rotated by another writer
	}
	if err := os.Rename(path, path+".1"); err != nil {
		return fmt.Errorf("rotate %s: %w", path, err)
	}
	return nil
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
