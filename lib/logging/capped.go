package logging

import (
	"errors"
	"os"
	"sync"
)

// fallbackMax caps the fallback log (and its one older generation, <path>.1). It is in the
// state dir, on tmpfs, which is memory: on a node with no syslog every hook call appends to
// it, and nothing else would ever shrink it. 1 MiB is thousands of lines, enough to see what
// happened lately; a node that needs more has a syslog.
const fallbackMax = 1 << 20

// cappedFile appends to a log file and, once it reaches max, renames it to <path>.1 (the
// generation before is dropped) and starts a new one. Processes share the file: each appends
// with O_APPEND, and each renames only the very file it holds (a concurrent rotation may
// drop a generation early; the bound holds whatever the interleaving).
type cappedFile struct {
	mu   sync.Mutex
	path string
	max  int64
	f    *os.File
}

func openCapped(path string, max int64) (*cappedFile, error) {
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	c := &cappedFile{path: path, max: max, f: f}
	c.rotateIfFull() // a log left full by earlier processes
	return c, nil
}

func (c *cappedFile) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.f.Write(p)
	if err == nil {
		c.rotateIfFull()
	}
	return n, err
}

// rotateIfFull starts a new file once the one held is full. It never fails a write: a
// rotation that cannot be done leaves the lines going where they went.
func (c *cappedFile) rotateIfFull() {
	held, err := c.f.Stat()
	if err != nil || held.Size() < c.max {
		return
	}
	if cur, err := os.Lstat(c.path); err == nil && os.SameFile(cur, held) {
		if err := os.Rename(c.path, c.path+".1"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return
		}
	}
	f, err := openFile(c.path)
	if err != nil {
		return
	}
	_ = c.f.Close()
	c.f = f
}

func (c *cappedFile) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.f.Close()
}
