package hook_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/resctrl-mon/resctrl-mon/hooks/hook"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/logging"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
)

// A syslog that stopped reading (its socket's queue full) cannot hold the hook past its
// budget: the hook's last log line, written after the work, is bounded inside the budget,
// and the exit code is still the policy's.
func TestBudgetStalledSyslog(t *testing.T) {
	t.Parallel()
	sock := stalledSocket(t)
	p := exec.Command("sleep", "60")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Process.Kill(); _ = p.Wait() })
	for _, policy := range []config.FailurePolicy{config.FailOpen, config.FailClosed} {
		dir := t.TempDir()
		cfg := config.Default()
		// A resctrl root that is not there: the worker fails at once, and the hook logs it.
		cfg.ResctrlRoot, cfg.StateDir, cfg.SnapshotDir = filepath.Join(dir, "none"), filepath.Join(dir, "state"), ""
		cfg.Log, cfg.FailurePolicy, cfg.HookBudget = "syslog", policy, config.Duration(400*time.Millisecond)
		in := fmt.Sprintf(`{"id":"c-%s","pid":%d}`, policy, p.Process.Pid)
		var stderr bytes.Buffer
		code := make(chan int, 1)
		go func() {
			code <- hook.Run(time.Now(), nil, hook.CreateRuntime, strings.NewReader(in), &stderr, cfg, nil, kernel.Open, logging.WithSyslogSocket(sock))
		}()
		select {
		case c := <-code:
			if want := map[config.FailurePolicy]int{config.FailOpen: 0, config.FailClosed: 1}[policy]; c != want {
				t.Errorf("%s: exit %d, want %d (stderr %q)", policy, c, want, stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the hook, budget 400ms, still runs after 10s with syslog stalled", policy)
		}
	}
}

// stalledSocket binds a datagram socket nobody reads, as a stalled /dev/log, and fills its
// queue.
func stalledSocket(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log")
	srv, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Close(srv) })
	if err := unix.Bind(srv, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	cl, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Close(cl) })
	if err := unix.Connect(cl, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, err := unix.Write(cl, []byte("x")); err == unix.EAGAIN {
			return path
		} else if err != nil || i > 1<<20 {
			t.Fatalf("filling the socket: %d sent, %v", i, err)
		}
	}
}
