package psi

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
)

// skipOrFail skips a test whose precondition is missing, or fails it with
// RESCTRLSIM_REQUIRE=1 (as in CI): a suite that silently skipped would prove nothing.
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("RESCTRLSIM_REQUIRE") == "1" {
		t.Fatalf("%s (RESCTRLSIM_REQUIRE=1 forbids skipping)", msg)
	}
	t.Skip(msg)
}

// newCgroup makes a child cgroup of the cgroup2 hierarchy's root, removed at cleanup after
// every process in it was killed.
func newCgroup(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		skipOrFail(t, "making cgroups needs root")
	}
	root, err := (cgroup.Host{}).Dir("/")
	if err != nil {
		skipOrFail(t, "no cgroup2 mount: %v", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	dir := filepath.Join(root, "psi-test-"+hex.EncodeToString(b))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// cgroup.kill (Linux 5.14) kills every process inside, forks in flight included.
		if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("kill %s: %v", dir, err)
		}
		err := poll(10*time.Second, func() error {
			err := os.Remove(dir)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err // EBUSY until the killed processes are reaped
		})
		if err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	return dir
}

// burn starts n busy loops in cgroup dir: a shell that moves itself into the cgroup and
// only then forks the loops, so every loop is inside from its first instruction. It returns
// once they run; they are killed when the test ends.
func burn(t *testing.T, dir string, n int) {
	t.Helper()
	script := fmt.Sprintf(`echo $$ > %s/cgroup.procs || exit 1
i=0; while [ $i -lt %d ]; do (while :; do :; done) & i=$((i+1)); done
echo running; wait`, dir, n)
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "running" {
		t.Fatalf("burner did not start: %q, %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
}

// poll calls f every 20 ms until it returns nil or timeout passes: for counters, which give
// no event to wait on.
func poll(timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v: %w", timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
