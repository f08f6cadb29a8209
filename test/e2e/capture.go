package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// CaptureRecord is one call of test/e2e/capturehook: what the runtime wrote on the hook's
// stdin, as it wrote it, and what the bundle's config.json held that could tell a
// container's pod and role.
type CaptureRecord struct {
	Stage string          `json:"stage"`
	State json.RawMessage `json:"state"`
	// Spec is nil when config.json could not be read; SpecError then says why.
	Spec      *CapturedSpec `json:"spec,omitempty"`
	SpecError string        `json:"specError,omitempty"`
}

// CapturedSpec is the part of config.json that capturehook keeps.
type CapturedSpec struct {
	Annotations map[string]string      `json:"annotations"`
	Args        []string               `json:"args"`
	Hostname    string                 `json:"hostname"`
	CgroupsPath string                 `json:"cgroupsPath"`
	Namespaces  []specs.LinuxNamespace `json:"namespaces"`
}

// DecodeState decodes the state the runtime sent.
func (r CaptureRecord) DecodeState() (specs.State, error) {
	var st specs.State
	if err := json.Unmarshal(r.State, &st); err != nil {
		return st, fmt.Errorf("captured %s state: %w", r.Stage, err)
	}
	return st, nil
}

// Capturer runs capturehook (built by the test: bin) for every container it is given to,
// at createRuntime and poststop, into a directory of its own.
type Capturer struct {
	Bin string
	Dir string
}

// NewCapturer makes the directory the records go to.
func NewCapturer(t testing.TB, bin string) *Capturer {
	t.Helper()
	return &Capturer{Bin: bin, Dir: t.TempDir()}
}

// Hooks are bundle hooks for runc and crun.
func (c *Capturer) Hooks() *specs.Hooks {
	h := func(stage string) []specs.Hook {
		return []specs.Hook{{Path: c.Bin, Args: []string{"capturehook", c.Dir, stage}}}
	}
	return &specs.Hooks{CreateRuntime: h("createRuntime"), Poststop: h("poststop")}
}

// HooksDir writes a hooks.d directory (podman --hooks-dir) with one entry per stage, as a
// package would install them: when always.
func (c *Capturer) HooksDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, stage := range []string{"createRuntime", "poststop"} {
		entry := struct {
			Version string          `json:"version"`
			Hook    specs.Hook      `json:"hook"`
			When    map[string]bool `json:"when"`
			Stages  []string        `json:"stages"`
		}{"1.0.0", specs.Hook{Path: c.Bin, Args: []string{"capturehook", c.Dir, stage}}, map[string]bool{"always": true}, []string{stage}}
		data, err := json.MarshalIndent(entry, "", "\t")
		if err != nil {
			t.Fatalf("e2e: encode hooks.d entry: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "capture-"+stage+".json"), data, 0o644); err != nil {
			t.Fatalf("e2e: write hooks.d entry: %v", err)
		}
	}
	return dir
}

// Wait returns the record of container id at stage, waiting up to 10 seconds for it (podman
// may run poststop hooks from its cleanup process, after `podman rm` returned).
func (c *Capturer) Wait(id, stage string) (CaptureRecord, error) {
	var rec CaptureRecord
	err := Poll(10*time.Second, func() error {
		b, err := os.ReadFile(filepath.Join(c.Dir, id+"."+stage+".json"))
		if err != nil {
			return fmt.Errorf("no %s record of %s: %w", stage, id, err)
		}
		return json.Unmarshal(b, &rec)
	})
	return rec, err
}
