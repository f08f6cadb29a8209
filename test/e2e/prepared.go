package e2e

import (
	"testing"
)

// PreparedRuntime returns the named runtime, preparing the machine for crun first.
func PreparedRuntime(t *testing.T, name string) *Runtime {
	t.Helper()
	if name == "crun" {
		PrepareCrun(t)
	}
	return NewRuntime(t, name)
}
