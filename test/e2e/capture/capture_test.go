package capture

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWriteRead writes calls as capturehook would and reads them back: in the order of their
// times, none overwriting another of the same container and stage, the state as written, the
// spec's parts kept, and why a spec is missing.
func TestWriteRead(t *testing.T) {
	t.Parallel()
	dir, bundle := t.TempDir(), t.TempDir()
	config := `{"ociVersion":"1.0.2","process":{"args":["sleep","600"]},"hostname":"h",` +
		`"annotations":{"io.kubernetes.cri-o.SandboxID":"abc"},"linux":{"cgroupsPath":"/pod/ctr"}}`
	if err := os.WriteFile(filepath.Join(bundle, "config.json"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	state := func(id, bundle string) []byte {
		return []byte(`{"ociVersion":"1.0.2","id":"` + id + `","status":"creating","bundle":"` + bundle + `"}`)
	}
	t0 := time.Unix(1_800_000_000, 0)
	// Written out of order: Read sorts by the time of the call, not of the write.
	for _, c := range []struct {
		stage string
		at    time.Duration
		state []byte
	}{
		{"poststop", 3, state("a", "/nonexistent")},
		{"createRuntime", 1, state("a", bundle)},
		{"prestart", 2, state("b", "")},
		{"poststop", 4, state("a", "/nonexistent")}, // a second poststop of a: kept too
	} {
		if err := Write(dir, c.stage, t0.Add(c.at), c.state); err != nil {
			t.Fatal(err)
		}
	}
	// A record being written (not yet renamed) is not read.
	if err := os.WriteFile(filepath.Join(dir, "x.json.tmp"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Stage+" "+r.ID)
	}
	if want := "createRuntime a, prestart b, poststop a, poststop a"; strings.Join(got, ", ") != want {
		t.Fatalf("calls %q, want %q", strings.Join(got, ", "), want)
	}
	cr := recs[0]
	// As written: the record indents it, but keeps every field and its order.
	var compact bytes.Buffer
	if err := json.Compact(&compact, cr.State); err != nil || compact.String() != string(state("a", bundle)) {
		t.Errorf("state %s (%v), want it as written", cr.State, err)
	}
	if cr.Spec == nil || cr.Spec.Annotations["io.kubernetes.cri-o.SandboxID"] != "abc" || cr.Spec.CgroupsPath != "/pod/ctr" ||
		cr.Spec.Hostname != "h" || strings.Join(cr.Spec.Args, " ") != "sleep 600" || cr.SpecError != "" {
		t.Errorf("createRuntime spec %+v (%q)", cr.Spec, cr.SpecError)
	}
	if recs[1].Spec != nil || recs[1].SpecError != "the state names no bundle" {
		t.Errorf("a state with no bundle: spec %+v, error %q", recs[1].Spec, recs[1].SpecError)
	}
	if recs[2].Spec != nil || !strings.Contains(recs[2].SpecError, "no such file") {
		t.Errorf("a removed bundle: spec %+v, error %q", recs[2].Spec, recs[2].SpecError)
	}
}

// TestWriteRefuses: a state or stage that would make a record unreadable, or its file name
// leave the directory, is refused, and nothing is written.
func TestWriteRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, stage, state string }{
		{"not JSON", "poststop", "garbage"},
		{"no id", "poststop", `{"status":"stopped"}`},
		{"id with a slash", "poststop", `{"id":"../x"}`},
		{"no stage", "", `{"id":"a"}`},
		{"stage with a dot", "post.stop", `{"id":"a"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := Write(dir, tc.stage, time.Now(), []byte(tc.state)); err == nil {
				t.Error("written")
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("left %d files", len(entries))
			}
		})
	}
}
