package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// HookRecorder is an OCI hook, a shell script, that appends each state it reads on stdin to a
// log, so a test can check what each runtime passed at each stage.
type HookRecorder struct {
	// Script is the hook program.
	Script string
	// Log holds one line per call: the stage name the hook was given (empty if none), a tab,
	// and the state JSON with its newlines removed.
	Log string
}

// HookRecord is one call of a HookRecorder.
type HookRecord struct {
	// Stage is the hook's first argument, as Hook sets it; empty for a hook entry with no
	// arguments (such as one hooks.d entry that serves several stages).
	Stage string
	// Raw is the state JSON as the runtime wrote it, less any newlines.
	Raw string
	// State is Raw decoded.
	State specs.State
}

// NewHookRecorder writes the hook script to a temporary directory.
func NewHookRecorder(t testing.TB) *HookRecorder {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "hook.log")
	// The runtime gives the hook only the environment the spec lists (often none), hence
	// PATH. A record is one printf, so one write(2): records of concurrent calls stay whole.
	// Newlines inside JSON strings are escaped, so the raw ones that tr drops are whitespace.
	script := WriteScript(t, "record-hook", fmt.Sprintf(`PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
state=$(tr -d '\n')
printf '%%s\t%%s\n' "${1:-}" "$state" >>%s
`, shellQuote(log)))
	return &HookRecorder{Script: script, Log: log}
}

// Hook returns a hook entry that runs the recorder, tagging its records with stage.
func (h *HookRecorder) Hook(stage string) specs.Hook {
	return specs.Hook{Path: h.Script, Args: []string{filepath.Base(h.Script), stage}}
}

// Hooks returns spec hooks that run the recorder at each of the given stages, named as in the
// spec's JSON ("createRuntime", "poststop", …); it panics on any other name.
func (h *HookRecorder) Hooks(stages ...string) *specs.Hooks {
	hs := &specs.Hooks{}
	for _, s := range stages {
		var list *[]specs.Hook
		switch s {
		case "prestart":
			list = &hs.Prestart //nolint:staticcheck // runtimes still run it; tests may want to
		case "createRuntime":
			list = &hs.CreateRuntime
		case "createContainer":
			list = &hs.CreateContainer
		case "startContainer":
			list = &hs.StartContainer
		case "poststart":
			list = &hs.Poststart
		case "poststop":
			list = &hs.Poststop
		default:
			panic(fmt.Sprintf("e2e: unknown hook stage %q", s))
		}
		*list = append(*list, h.Hook(s))
	}
	return hs
}

// Records returns the calls so far, in order.
func (h *HookRecorder) Records() ([]HookRecord, error) {
	data, err := os.ReadFile(h.Log)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read hook log: %w", err)
	}
	var recs []HookRecord
	for line := range strings.Lines(string(data)) {
		stage, raw, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		if !ok {
			return recs, fmt.Errorf("hook log %s: malformed record %q", h.Log, line)
		}
		r := HookRecord{Stage: stage, Raw: raw}
		if err := json.Unmarshal([]byte(raw), &r.State); err != nil {
			return recs, fmt.Errorf("hook log %s: decode state %q: %w", h.Log, raw, err)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// WriteHooksDir writes a podman/CRI-O hooks directory (for --hooks-dir) whose one entry runs
// hook at the given stages for every container: schema version 1.0.0, when always true.
func WriteHooksDir(t testing.TB, hook specs.Hook, stages ...string) string {
	t.Helper()
	entry := struct {
		Version string          `json:"version"`
		Hook    specs.Hook      `json:"hook"`
		When    map[string]bool `json:"when"`
		Stages  []string        `json:"stages"`
	}{"1.0.0", hook, map[string]bool{"always": true}, stages}
	data, err := json.MarshalIndent(entry, "", "\t")
	if err != nil {
		t.Fatalf("e2e: encode hooks.d entry: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "e2e.json"), data, 0o644); err != nil {
		t.Fatalf("e2e: write hooks.d entry: %v", err)
	}
	return dir
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
