package aside

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A child still running at its deadline is killed there, and makes no step after it: here
// it is blocked writing to a full pipe (as a tasks write waits on resctrl), and the step
// after the write (a file made) must never run, however long after the deadline the pipe is
// read. Its parent is told how it ended once it is reaped (an event, where waiting a while
// would prove nothing; the bound only ends a broken test); the pipe is read only then. One budget
// at a time: a child holds its caller's P while it runs (see Calls), and a child that is
// never killed holds it for good.
func TestDeadlineKillsTheChild(t *testing.T) {
	t.Parallel()
	for _, budget := range []time.Duration{0, time.Microsecond, time.Millisecond, 50 * time.Millisecond, 300 * time.Millisecond} {
		func() {
			c, err := NewCalls()
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			fifo := filepath.Join(dir, "fifo")
			if err := unix.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			marker := filepath.Join(dir, "after-the-deadline")
			pfifo, pmarker := cstr(t, fifo), cstr(t, marker)
			big := make([]byte, 1<<20) // far more than a pipe holds
			steps := []Step{
				{Trap: syscall.SYS_OPENAT, Args: [4]uintptr{AtFDCWD, ptr(pfifo), unix.O_WRONLY | unix.O_CLOEXEC}, Stop: true},
				{Trap: syscall.SYS_WRITE, FdOf: 1, Args: [4]uintptr{0, ptr(big), uintptr(len(big))}, Stop: true},
				{Trap: syscall.SYS_OPENAT, Args: [4]uintptr{AtFDCWD, ptr(pmarker), unix.O_WRONLY | unix.O_CREAT | unix.O_CLOEXEC, 0o600}},
			}
			err = c.Run(time.Now().Add(budget), steps, pfifo, pmarker, big)
			if !errors.Is(err, ErrStuck) {
				t.Fatalf("%s: a program blocked past its deadline: %v, want ErrStuck", budget, err)
			}
			// The child was killed at its deadline, or, the deadline passed, never made.
			if c.last == nil {
				if steps[0].Ran {
					t.Fatalf("%s: no child, and yet its first step ran", budget)
				}
			} else {
				select {
				case err := <-c.last:
					// Plain ErrStuck: the deadline passed before the child was made.
					if !errors.Is(err, ErrStuck) {
						t.Fatalf("%s: the child ended with %v, want killed at its deadline", budget, err)
					}
				case <-time.After(30 * time.Second):
					t.Fatalf("%s: the child still runs 30s after its deadline: it was not killed", budget)
				}
			}
			// Whatever the pipe held is read now: a child still there would go on.
			for {
				if n, _ := unix.Read(int(r.Fd()), make([]byte, 1<<16)); n <= 0 {
					break
				}
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("%s: the step after the blocked write ran after the deadline", budget)
			}
			// Every later program is refused, or runs against a deadline passed: none starts.
			if err := c.Run(time.Now().Add(time.Minute), []Step{{Trap: syscall.SYS_GETPID}}); err != nil && !errors.Is(err, ErrStuck) {
				t.Errorf("%s: the next program: %v", budget, err)
			}
		}()
	}
}
