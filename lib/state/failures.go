package state

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
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
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("record failure: %w", err)
	}
	_, werr := fh.Write(append(b, '\n'))
	return errors.Join(werr, fh.Close())
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
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var fl Failure
			if json.Unmarshal(sc.Bytes(), &fl) == nil && !fl.Time.Before(since) {
				out = append(out, fl)
			}
		}
		_ = f.Close()
	}
	return out, nil
}
