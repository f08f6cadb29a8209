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
				return fmt.Errorf("%s is still running", filepath.Dir(p))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
