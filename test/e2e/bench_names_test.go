package e2e_test

import (
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
)

// bench_test.go's benchmarks still name the harness's binaries and pods as they were named
// when the tests shared one package; these keep those names for it until it is moved onto
// the harness (another change edits BenchmarkHook now).
var binaries struct{ hook, noop string }

func buildBinaries(t testing.TB) {
	t.Helper()
	e2e.BuildBinaries(t)
	binaries.hook, binaries.noop = e2e.Binaries.Hook, e2e.Binaries.Noop
}

var crioPod, sandboxOf = e2e.CRIOPod, e2e.SandboxOf

const uidA = e2e.PodUIDA
