package sidecar

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/psi"
)

const (
	cpuOld = "some avg10=1.50 avg60=0.75 avg300=0.20 total=385\n"
	twoL   = "some avg10=0.89 avg60=1.19 avg300=1.33 total=15961145\nfull avg10=0.00 avg60=0.00 avg300=0.15 total=7168173\n"
)

// fakeHost is a procfs tree whose cgroup2 is mounted (in our own mountinfo) at a temporary
// directory, with the system-wide pressure file that says the kernel keeps PSI.
type fakeHost struct {
	proc, mnt string
}

func newFakeHost(t *testing.T) fakeHost {
	t.Helper()
	h := fakeHost{proc: t.TempDir(), mnt: t.TempDir()}
	writeFile(t, filepath.Join(h.proc, "self", "mountinfo"), "41 31 0:38 / "+h.mnt+" rw - cgroup2 cgroup2 rw\n")
	writeFile(t, filepath.Join(h.proc, "pressure", "cpu"), cpuOld)
	return h
}

// start puts a process pid in a container cgroup of that name with its pressure files,
// and returns the cgroup's directory.
func (h fakeHost) start(t *testing.T, pid int, name string) string {
	t.Helper()
	writeFile(t, filepath.Join(h.proc, strconv.Itoa(pid), "cgroup"), "0::/pod/"+name+"\n")
	dir := filepath.Join(h.mnt, "pod", name)
	writeFile(t, filepath.Join(dir, "cpu.pressure"), cpuOld)
	writeFile(t, filepath.Join(dir, "memory.pressure"), twoL)
	writeFile(t, filepath.Join(dir, "io.pressure"), twoL)
	return dir
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// logBuffer is a log a test can read while the code under test writes it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *logBuffer) String() string       { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }
func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

func TestTrackerBackoff(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t)
	clk := &clock{t: time.Unix(1000, 0)}
	var logs logBuffer
	calls, found := 0, false
	tr := &tracker{host: cgroup.Host{Proc: h.proc}, log: logs.logger(), now: clk.now, min: 100 * time.Millisecond, max: time.Second,
		find: func() (int, error) {
			calls++
			if !found {
				return 0, fmt.Errorf("%w: not yet", ErrNotFound)
			}
			return 42, nil
		}}

	// Searches happen only when the backoff has passed; it doubles up to its maximum.
	var at []int
	for range 60 {
		if _, err := tr.Check(); !errors.Is(err, ErrNotFound) {
			t.Fatalf("not found: %v", err)
		}
		at = append(at, calls)
		clk.add(100 * time.Millisecond)
	}
	// Searches at 0, 0.1, 0.3, 0.7, 1.5, then every second: at steps 0, 1, 3, 7, 15, 25, 35, 45, 55.
	var steps []int
	for i := range at {
		if i == 0 || at[i] != at[i-1] {
			steps = append(steps, i)
		}
	}
	if fmt.Sprint(steps) != "[0 1 3 7 15 25 35 45 55]" {
		t.Errorf("searched at steps %v", steps)
	}

	// The container appears: ready at the next search, and no search while it stays.
	found = true
	dir := h.start(t, 42, "app")
	clk.add(time.Second)
	before := calls
	for range 3 {
		tgt, err := tr.Check()
		if err != nil || tgt != (Target{PID: 42, Dir: dir}) {
			t.Fatalf("found: %+v, %v", tgt, err)
		}
	}
	if calls != before+1 {
		t.Errorf("%d searches while found, want 1", calls-before)
	}

	// It goes: not ready at once, with the reason.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Check(); err == nil || !strings.Contains(err.Error(), "cgroup v2 directory") {
		t.Errorf("gone: %v", err)
	}
	// It comes back (a restart): found again once the backoff passed.
	h.start(t, 42, "app")
	clk.add(100 * time.Millisecond)
	if _, err := tr.Check(); err != nil {
		t.Errorf("back: %v", err)
	}

	// Each state was logged once, however often it was asked about.
	log := logs.String()
	for msg, want := range map[string]int{"not yet": 1, "container found": 2, "lost the container": 1} {
		if n := strings.Count(log, msg); n != want {
			t.Errorf("%q logged %d times, want %d:\n%s", msg, n, want, log)
		}
	}
}

func TestTrackerFatal(t *testing.T) {
	t.Parallel()
	calls := 0
	var logs logBuffer
	tr := &tracker{log: logs.logger(), now: time.Now, min: time.Millisecond, max: time.Millisecond, fatal: psi.ErrNoPSI,
		find: func() (int, error) { calls++; return 1, nil }}
	if _, err := tr.Check(); !errors.Is(err, psi.ErrNoPSI) || calls != 0 {
		t.Errorf("%v after %d searches", err, calls)
	}
}
