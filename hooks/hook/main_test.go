package hook_test

import (
	"os"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/hooks/hook"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
)

// The hook's worker is this test binary (see hook.WorkerArg).
func TestMain(m *testing.M) {
	hook.WorkIfAsked(kernel.Open)
	if len(os.Args) == 2 && os.Args[1] == runHookArg {
		os.Exit(runHook())
	}
	os.Exit(m.Run())
}
