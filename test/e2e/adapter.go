package e2e

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

// StartAdapter runs the adapter binary against the runtime's NRI socket and waits until it
// has synchronised (its log says so).
func StartAdapter(t testing.TB, e *HookEnv, socket string, args ...string) (kill func()) {
	t.Helper()
	return StartAdapterCmd(t, e, exec.Command(Binaries.NRI, append([]string{"--config", e.CfgPath, "--nri-socket", socket}, args...)...))
}

// StartAdapterCmd is StartAdapter with the adapter's command line given whole (as a unit's
// ExecStart says it, say); its log must be e's.
func StartAdapterCmd(t testing.TB, e *HookEnv, cmd *exec.Cmd) (kill func()) {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	// Counted before the start: an adapter that synchronises at once, before the count is
	// taken, would otherwise be counted in, and waited for again until the deadline.
	before := strings.Count(e.Log(), "msg=synchronized")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var once sync.Once
	kill = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			if err := <-exited; err != nil {
				t.Logf("adapter ended: %v", err)
			}
		})
	}
	t.Cleanup(kill)
	if err := poll.Until(20*time.Second, func() error {
		select {
		case err := <-exited:
			t.Fatalf("the adapter exited: %v\n%s\n%s", err, stderr.String(), e.Log())
		default:
		}
		if strings.Count(e.Log(), "msg=synchronized") == before {
			return os.ErrNotExist
		}
		return nil
	}); err != nil {
		t.Fatalf("the adapter did not synchronise: %v\n%s", err, e.Log())
	}
	return kill
}
