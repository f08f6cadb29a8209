package psi

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/test/cgrouptest"
)

var skipOrFail = cgrouptest.SkipOrFail

// newCgroup makes a child cgroup of the cgroup2 hierarchy's root, removed at cleanup after
// every process in it was killed.
func newCgroup(t *testing.T) string {
	t.Helper()
	root, err := (cgroup.Host{}).Dir("/")
	return cgrouptest.New(t, root, err)
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

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
