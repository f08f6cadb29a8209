// Package bench holds what the project's benchmarks share. They print ratios against a
// baseline measured in the same run, from medians: these machines are shared, and one run
// slowed by another tenant moves a mean by more than the few per cent being measured.
package bench

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// Median is the middle of the durations (the mean of the two middle ones for an even count),
// 0 for none.
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ResctrlEnv names a resctrl mount for the lifecycle benchmarks (lib/lifecycle's
// JoinLifecycle, nri-adapter/nriplugin's): set on a machine with RDT, such as
// RESCTRLMON_BENCH_RESCTRL=/sys/fs/resctrl, they measure against the kernel's resctrl
// instead of the simulator. They make groups of their own there (pod UIDs of the form
// 0f8b2c1e-...) and remove them when they end.
const ResctrlEnv = "RESCTRLMON_BENCH_RESCTRL"

// Resctrl is the resctrl root a benchmark runs on: ResctrlEnv's, else a simulator mounted
// with opts for the benchmark.
func Resctrl(b *testing.B, opts resctrlsim.Options) string {
	b.Helper()
	if root := os.Getenv(ResctrlEnv); root != "" {
		b.Logf("on %s (%s), not the simulator", root, ResctrlEnv)
		return root
	}
	return resctrlsim.MountT(b, opts).Dir
}

// RemoveGroups removes the named monitoring groups under root when the benchmark ends, as
// long as it is made before them: those a benchmark leaves in place (a pod's group whose
// first container stays) would hold an RMID on a real resctrl.
func RemoveGroups(b *testing.B, root string, names ...string) {
	b.Cleanup(func() {
		for _, n := range names {
			if err := syscall.Rmdir(filepath.Join(root, "mon_groups", n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				b.Errorf("remove the benchmark's group %s: %v", n, err)
			}
		}
	})
}
