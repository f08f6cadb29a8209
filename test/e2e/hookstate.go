package e2e

import (
	"encoding/json"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// StateJSON is the OCI state a runtime writes to a hook's stdin.
func StateJSON(t *testing.T, st specs.State) []byte {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
