package hook_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// caplessArgs run a command as root with no capability at all (permitted, effective,
// inheritable, ambient and bounding sets empty): what a root hostPID pod with its
// capabilities dropped is, and how the chart runs the long-running processes.
var caplessArgs = []string{"setpriv", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all", "--"}

// startCapless starts args capless and returns its pid once a line of its output matches
// ready (the process is past its start, harden's call included).
func startCapless(t *testing.T, ready *regexp.Regexp, args ...string) int {
	t.Helper()
	cmd := exec.Command(caplessArgs[0], append(caplessArgs[1:], args...)...)
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var out strings.Builder
	seen := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(r)
		once := sync.Once{}
		for sc.Scan() {
			mu.Lock()
			out.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if ready.MatchString(sc.Text()) {
				once.Do(func() { close(seen) })
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); _ = w.Close() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if err := <-exited; err != nil {
			t.Logf("%s ended: %v", cmd.Path, err) // killed: the expected end
		}
	})
	select {
	case <-seen:
	case err := <-exited:
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%q exited before it was ready: %v\n%s", args, err, out.String())
	case <-time.After(30 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%q not ready within 30s (no line matching %s)\n%s", args, ready, out.String())
	}
	return cmd.Process.Pid
}

// reach says what a capless root process reaches of pid's /proc files: "" for each it could
// open, else why not.
func reach(t *testing.T, pid int) (root, fd string) {
	t.Helper()
	p := "/proc/" + strconv.Itoa(pid)
	try := func(args ...string) string {
		out, err := exec.Command(caplessArgs[0], append(caplessArgs[1:], args...)...).CombinedOutput()
		if err != nil {
			return fmt.Sprintf("%v: %s", err, bytes.TrimSpace(out))
		}
		return ""
	}
	// The fd directory itself lists (its mode lets its owner, root, read it); what the
	// descriptors are, and opening them, is refused.
	return try("ls", p+"/root/"), try("readlink", "-v", p+"/fd/0")
}

// TestLongRunningNonDumpable: the NRI adapter, `resctrl-mon serve`, `reconcile --every` and
// the sidecar run as root with no capabilities in the host's PID namespace; another root
// process without capabilities (a root hostPID pod's) must not reach their root directory
// (the host's mounts, the adapter's NRI socket) or their open files through /proc. A
// capless process left dumpable is reachable: the control that shows the probe can.
func TestLongRunningNonDumpable(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux)")
	}
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "")
	e.Config("")
	control := startCapless(t, regexp.MustCompile(`ready`), "sh", "-c", "echo ready; exec sleep 600")
	if root, fd := reach(t, control); root != "" || fd != "" {
		t.Fatalf("a capless root process cannot reach even a dumpable one (root: %q, fd: %q): the test proves nothing", root, fd)
	}

	// The adapter connects to a runtime that never answers: it stays up, waiting.
	sockDir, err := os.MkdirTemp("", "nri-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "nri.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	connected := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			connected <- c
		}
	}()

	for _, p := range []struct {
		name  string
		ready *regexp.Regexp
		args  []string
	}{
		{"serve", regexp.MustCompile(`serving /metrics`), []string{e2e.Binaries.CLI, "--config", e.CfgPath, "serve", "--listen", "127.0.0.1:0"}},
		{"reconcile --every", regexp.MustCompile(`live containers`), []string{e2e.Binaries.CLI, "--config", e.CfgPath, "reconcile", "--every", "1h"}},
		{"sidecar", regexp.MustCompile(`msg=listening`), []string{e2e.Binaries.CLI, "sidecar", "--address", "127.0.0.1", "--port", "0", "--pid", "1"}},
		{"nri adapter", nil, []string{e2e.Binaries.NRI, "--config", e.CfgPath, "--nri-socket", sock}},
	} {
		t.Run(p.name, func(t *testing.T) {
			var pid int
			if p.ready == nil {
				pid = startCapless(t, regexp.MustCompile(`^`), append([]string{"sh", "-c", `echo started; exec "$@"`, "sh"}, p.args...)...)
				select {
				case c := <-connected:
					t.Cleanup(func() { _ = c.Close() })
				case <-time.After(30 * time.Second):
					t.Fatal("the adapter did not connect to the NRI socket within 30s")
				}
			} else {
				pid = startCapless(t, p.ready, p.args...)
			}
			root, fd := reach(t, pid)
			for what, got := range map[string]string{"/proc/<pid>/root": root, "/proc/<pid>/fd/0": fd} {
				if !strings.Contains(got, "Permission denied") {
					t.Errorf("%s of %s (pid %d) from a capless root process: %q, want Permission denied", what, p.name, pid, got)
				}
			}
		})
	}
}
