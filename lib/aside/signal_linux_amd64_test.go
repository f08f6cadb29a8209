package aside

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A child killed by a signal is an error naming the signal, never a success: the step it
// died in and the steps after it are not reported as run (their Errno 0 would read as done).
// The program kills itself: getpid, then kill of that pid (FdOf hands the pid on), then a
// step that must never run.
func TestSignalledChildIsAnError(t *testing.T) {
	t.Parallel()
	c, err := NewCalls()
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "after-the-signal")
	path := cstr(t, marker)
	steps := []Step{
		{Trap: syscall.SYS_GETPID},
		{Trap: syscall.SYS_KILL, FdOf: 1, Args: [4]uintptr{0, uintptr(syscall.SIGKILL)}},
		{Trap: syscall.SYS_OPENAT, Args: [4]uintptr{AtFDCWD, ptr(path), unix.O_WRONLY | unix.O_CREAT | unix.O_CLOEXEC, 0o600}},
	}
	err = c.Run(time.Now().Add(time.Minute), steps, path)
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("a child killed by SIGKILL: %v, want an error naming the signal", err)
	}
	if errors.Is(err, ErrStuck) {
		t.Errorf("a child killed before its deadline reads as stuck: %v", err)
	}
	if !steps[0].Ran || steps[1].Ran || steps[2].Ran {
		t.Errorf("steps reported run: %v %v %v, want only the getpid", steps[0].Ran, steps[1].Ran, steps[2].Ran)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the step after the signal ran")
	}
	// The child is reaped: the next program runs.
	if err := c.Run(time.Now().Add(time.Minute), []Step{{Trap: syscall.SYS_GETPID}}); err != nil {
		t.Errorf("the next program after a killed child: %v", err)
	}
}
