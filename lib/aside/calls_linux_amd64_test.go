package aside

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

const stuckArg = "aside-test-stuck"

// cstr is path as the kernel reads it.
func cstr(t testing.TB, path string) []byte {
	b, err := unix.ByteSliceFromString(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ptr(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }

// A program's calls run in order in the child: a file opened by one step is written by the
// next, and each step's result comes back; a failed step with Stop ends the program.
func TestCallsRunInOrder(t *testing.T) {
	t.Parallel()
	c, err := NewCalls()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path, missing := cstr(t, filepath.Join(dir, "f")), cstr(t, filepath.Join(dir, "none", "g"))
	text := []byte("42\n")
	steps := []Step{
		{Trap: syscall.SYS_OPENAT, Args: [4]uintptr{AtFDCWD, ptr(path), unix.O_WRONLY | unix.O_CREAT | unix.O_CLOEXEC, 0o600}, Stop: true},
		{Trap: syscall.SYS_WRITE, FdOf: 1, Args: [4]uintptr{0, ptr(text), uintptr(len(text))}},
		{Trap: syscall.SYS_OPENAT, Args: [4]uintptr{AtFDCWD, ptr(missing), unix.O_WRONLY | unix.O_CREAT, 0o600}, Stop: true},
		{Trap: syscall.SYS_WRITE, FdOf: 3, Args: [4]uintptr{0, ptr(text), uintptr(len(text))}},
	}
	if err := c.Run(time.Now().Add(time.Minute), steps, path, missing, text); err != nil {
		t.Fatal(err)
	}
	if s := steps[1]; !s.Ran || s.Errno != 0 || s.R1 != 3 {
		t.Errorf("write: %+v, want 3 bytes written", s)
	}
	if s := steps[2]; !s.Ran || s.Errno != syscall.ENOENT {
		t.Errorf("open of a missing directory's file: %+v, want ENOENT", s)
	}
	if steps[3].Ran {
		t.Error("a step after a failed Stop step ran")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || !bytes.Equal(b, text) {
		t.Errorf("the file holds %q, %v", b, err)
	}
	if err := c.Run(time.Now().Add(time.Minute), []Step{{Trap: syscall.SYS_GETPID, FdOf: 1}}); err == nil {
		t.Error("a step taking its file from itself was run")
	}
}

// stuckChild is a process whose program hangs (opening a FIFO nobody writes): it must see
// ErrStuck at its deadline, and then be able to exit.
func stuckChild(io.Reader, io.Writer) int {
	c, err := NewCalls()
	if err != nil {
		return 3
	}
	fifo, _ := unix.ByteSliceFromString(os.Getenv("ASIDE_TEST_FIFO"))
	open := []Step{{Trap: syscall.SYS_OPENAT, Args: [4]uintptr{AtFDCWD, uintptr(unsafe.Pointer(&fifo[0])), unix.O_RDONLY}}}
	if err := c.Run(time.Now().Add(100*time.Millisecond), open, fifo); !errors.Is(err, ErrStuck) {
		return 4
	}
	// Refused while the killed child is not reaped (it may hold a kernel lock); run once it is.
	if err := c.Run(time.Now().Add(time.Minute), []Step{{Trap: syscall.SYS_GETPID}}); err != nil && !errors.Is(err, ErrStuck) {
		return 5
	}
	_, _ = os.Stdout.WriteString("gave up\n")
	return 0
}

// A process ends although its child was stuck in a system call, and the child holds none of
// its files: its parent's wait for its output ends with it (a runtime waits for a hook so).
// The child does not outlive its deadline: it is killed there (nobody is left to read the
// FIFO; the bound only ends a broken test).
func TestStuckChildLeavesItsParentFree(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Whatever happens, the stuck child is let go at the end: a writer opens the FIFO.
	defer func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}()
	cmd := exec.Command(os.Args[0], stuckArg)
	cmd.Env = append(os.Environ(), "ASIDE_TEST_FIFO="+fifo)
	out, err := cmd.Output()
	if err != nil || string(out) != "gave up\n" {
		t.Fatalf("the process with a stuck child: %q, %v", out, err)
	}
	if err := poll.Until(30*time.Second, func() error {
		f, err := os.OpenFile(fifo, os.O_WRONLY|unix.O_NONBLOCK, 0)
		if err == nil {
			f.Close()
			return errors.New("the child still waits on the FIFO past its deadline")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// askedStuck runs stuckChild when the test binary was started as one (TestMain).
func askedStuck() { IfAsked(stuckArg, stuckChild) }
