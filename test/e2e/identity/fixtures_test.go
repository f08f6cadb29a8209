package identity_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/test/e2e/capture"
)

var updateFixtures = flag.Bool("update-fixtures", false,
	"TestIdentityFixtures, TestCaptureCRIO, TestCaptureContainerd: rewrite lib/identity/testdata from what the runtimes send, instead of comparing")

// fixtureDir holds what each runtime sent, one file per case; lib/identity's TestFixtures
// reads them.
const fixtureDir = "../../../lib/identity/testdata"

// fixture is one file of fixtureDir: one container, as its runtime showed it, captured by
// test/e2e/capturehook (capture.Record) for every runtime that runs hooks. runc, crun and
// podman have a record at createRuntime and one at poststop; CRI-O has those too, plus the
// crictl configs and the hook calls each crictl command caused (timeline); containerd, which
// runs no hooks.d, has its bundle's config.json instead (Bundle, a record with no state).
type fixture struct {
	Case     string   `json:"case"`
	About    string   `json:"about"`
	Captured captured `json:"captured"`
	// IDs are the container's own ID and, for a pod member or infra, the pod's and the infra
	// container's, as the runtime reported them, and the UID a CRI pod was given.
	IDs           fixtureIDs      `json:"ids"`
	Timeline      []criStep       `json:"timeline,omitempty"`
	CreateRuntime *capture.Record `json:"createRuntime,omitempty"`
	Poststop      *capture.Record `json:"poststop,omitempty"`
	Bundle        *capture.Record `json:"bundle,omitempty"`
}

type captured struct {
	Versions []string `json:"versions"`
	Commands []string `json:"commands"`
	// Configs are the JSON configs crictl was given, by the name Commands use.
	Configs map[string]json.RawMessage `json:"configs,omitempty"`
	How     string                     `json:"how"`
}

type fixtureIDs struct {
	Self   string `json:"self"`
	Pod    string `json:"pod,omitempty"`
	Infra  string `json:"infra,omitempty"`
	PodUID string `json:"podUID,omitempty"`
}

// criStep is one crictl command and the hook calls it caused ("stage <id>").
type criStep struct {
	Command string   `json:"command"`
	Hooks   []string `json:"hooks"`
}

// compareOrWriteFixture rewrites got's file under -update-fixtures; otherwise it compares
// view (what must not drift, in a form two captures share) of got and of the stored file, and
// fails on every difference.
func compareOrWriteFixture(t *testing.T, got fixture, view func(*testing.T, fixture) map[string]string) {
	t.Helper()
	path := filepath.Join(fixtureDir, got.Case+".json")
	if *updateFixtures {
		b, err := encodeFixture(got)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (make it with -update-fixtures)", err)
	}
	var want fixture
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	gotView, wantView := view(t, got), view(t, want)
	failed := false
	for _, k := range slices.Sorted(maps.Keys(wantView)) {
		if gotView[k] != wantView[k] {
			t.Errorf("%s: %s: the runtime sent %q, the fixture has %q", got.Case, k, gotView[k], wantView[k])
			failed = true
		}
	}
	if failed {
		t.Logf("%s: if the runtime changed, rewrite the fixtures with -update-fixtures and review the identity code", path)
	}
}

func encodeFixture(f fixture) ([]byte, error) {
	b, err := json.MarshalIndent(f, "", "\t")
	return append(b, '\n'), err
}

// TestFixtureFormat reads every fixture and writes it again as -update-fixtures would: the
// bytes must be those stored, so the one fixture type reads and writes every runtime's files
// without losing or reordering a field.
func TestFixtureFormat(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join(fixtureDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s: %v", fixtureDir, err)
	}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var f fixture
		if err := dec.Decode(&f); err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		again, err := encodeFixture(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, b) {
			t.Errorf("%s: written again it differs from the stored file (%d bytes, stored %d)", path, len(again), len(b))
		}
	}
}
