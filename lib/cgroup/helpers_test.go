package cgroup

import (
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/cgrouptest"
)

var skipOrFail = cgrouptest.SkipOrFail

// newCgroup makes a child cgroup of the cgroup2 hierarchy's root, removed at cleanup after
// every process in it was killed.
func newCgroup(t *testing.T) string {
	t.Helper()
	root, err := (Host{}).Dir("/")
	return cgrouptest.New(t, root, err)
}
