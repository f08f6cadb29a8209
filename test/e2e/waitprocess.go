package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

// WaitNoProcess waits until no process runs the binary exe with mark in its environment:
// whatever a test's hooks or wrappers left in flight when their budget ran out has ended.
func WaitNoProcess(t *testing.T, exe, mark string) {
	t.Helper()
	err := poll.Until(time.Minute, func() error {
		procs, _ := filepath.Glob("/proc/[0-9]*/exe")
		for _, p := range procs {
			if got, err := os.Readlink(p); err != nil || got != exe {
				continue
			}
			env, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "environ"))
			if slices.Contains(strings.Split(string(env), "\x00"), mark) {
				return fmt.Errorf("%s is still running: %s", filepath.Dir(p), describeProcess(filepath.Dir(p)))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// describeProcess is what a process left running is doing, for the failure: its command
// line, its parent, and each thread's state and kernel wait channel (a thread in a FUSE
// request waits in request_wait_answer, a vfork parent in wait_for_vfork_done).
func describeProcess(dir string) string {
	read := func(p string) string { b, _ := os.ReadFile(p); return strings.TrimSpace(string(b)) }
	var b strings.Builder
	fmt.Fprintf(&b, "cmdline %q", strings.ReplaceAll(read(filepath.Join(dir, "cmdline")), "\x00", " "))
	for _, l := range strings.Split(read(filepath.Join(dir, "status")), "\n") {
		if strings.HasPrefix(l, "PPid:") || strings.HasPrefix(l, "State:") {
			b.WriteString("; " + strings.Join(strings.Fields(l), " "))
		}
	}
	tasks, _ := filepath.Glob(filepath.Join(dir, "task", "[0-9]*"))
	for _, task := range tasks {
		stat := read(filepath.Join(task, "stat"))
		state := ""
		if i := strings.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) {
			state = stat[i+2 : i+3]
		}
		fmt.Fprintf(&b, "; thread %s %s in %s", filepath.Base(task), state, read(filepath.Join(task, "wchan")))
	}
	return b.String()
}
