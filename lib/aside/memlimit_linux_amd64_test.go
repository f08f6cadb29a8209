package aside

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const memLimitArg = "aside-test-memlimit"

// memLimitChild runs a program that waits (opening a FIFO for reading) while another
// goroutine allocates far past GOMEMLIMIT and only then opens the FIFO for writing, letting
// the program end. A collection started meanwhile would stop the world, and wait for good
// on the thread inside vfork: the allocating goroutine would never get to the FIFO.
func memLimitChild(io.Reader, io.Writer) int {
	c, err := NewCalls()
	if err != nil {
		return 3
	}
	fifo := os.Getenv("ASIDE_TEST_FIFO")
	path, _ := unix.ByteSliceFromString(fifo)
	open := []Step{{Trap: syscall.SYS_OPENAT, Args: [4]uintptr{AtFDCWD, uintptr(unsafe.Pointer(&path[0])), unix.O_RDONLY | unix.O_CLOEXEC}}}
	go func() {
		var keep [][]byte
		for range 256 {
			keep = append(keep, make([]byte, 1<<20))
		}
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			f.Close()
		}
		_ = len(keep)
	}()
	if err := c.Run(time.Now().Add(time.Minute), open, path); err != nil || open[0].Errno != 0 {
		return 4
	}
	c.Close()
	_, _ = os.Stdout.WriteString("done\n")
	return 0
}

// A process with a memory limit (GOMEMLIMIT) far below what it allocates while a child
// runs does not collect meanwhile: the collector's stop of the world would wait on the
// thread inside vfork, and the process would hang. The bound only ends a broken test.
func TestNoCollectionWhileAChildRuns(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], memLimitArg)
	cmd.Env = append(os.Environ(), "ASIDE_TEST_FIFO="+fifo, "GOMEMLIMIT=4MiB", "GOGC=100")
	out, err := cmd.Output()
	if ctx.Err() != nil {
		// Let the stuck child go (its reader waits for a writer), then report.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("the process hung: a collection stopped the world while a child ran")
	}
	if err != nil || string(out) != "done\n" {
		t.Fatalf("the process: %q, %v", out, err)
	}
}

// askedMemLimit runs memLimitChild when the test binary was started as one (TestMain).
func askedMemLimit() { IfAsked(memLimitArg, memLimitChild) }
