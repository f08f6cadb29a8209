package hook_test

import (
	"os"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/hooks/hook"
)

// The hook's worker is this test binary (see hook.WorkerArg).
func TestMain(m *testing.M) {
	hook.WorkIfAsked()
	if len(os.Args) == 2 && os.Args[1] == runHookArg {
		os.Exit(runHook())
	}
	os.Exit(m.Run())
}
