package e2e

import (
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/snapshot"
)

// SnapshotKinds lists the kinds of a group's snapshot files, in order.
func SnapshotKinds(t *testing.T, e *HookEnv, group string) []snapshot.Kind {
	t.Helper()
	var kinds []snapshot.Kind
	for _, n := range LifeSnapshots(t, e.SnapDir, group) {
		kinds = append(kinds, n.Kind)
	}
	return kinds
}
