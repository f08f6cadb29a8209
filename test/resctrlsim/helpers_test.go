package resctrlsim_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if os.Getenv("RESCTRLSIM_TEST_HELPER") == "forker" {
		forkerMain()
		return
	}
	os.Exit(m.Run())
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(b)
}

// write does one write(2) of s to path, as a tool writing a tasks file does.
func write(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, werr := f.Write([]byte(s))
	return errors.Join(werr, f.Close())
}

func mustMkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatalf("mkdir %s: %v", path, err)
	}
}

func wantErrno(t *testing.T, what string, err error, want syscall.Errno) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got %v, want %v", what, err, want)
	}
}

// ids parses a tasks file.
func ids(t *testing.T, path string) []int {
	t.Helper()
	var out []int
	for _, f := range strings.Fields(read(t, path)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s: not a task id: %q", path, f)
		}
		out = append(out, n)
	}
	return out
}

func has(t *testing.T, tasksFile string, id int) bool {
	t.Helper()
	return slices.Contains(ids(t, tasksFile), id)
}

// start runs a command for the length of the test.
func start(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// threads lists the thread ids of a process.
func threads(t *testing.T, pid int) []int {
	t.Helper()
	es, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range es {
		n, _ := strconv.Atoi(e.Name())
		out = append(out, n)
	}
	return out
}

// eventually polls cond until it holds or the deadline passes; the deadline is generous
// because these machines are shared, and nothing here asserts a duration.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
