// Package ocistate reads what a runtime hands an OCI hook: the container state on stdin and
// the bundle's config.json.
package ocistate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/clip"
)

// MaxStateSize bounds the state JSON. A real one is a few KB (annotations included); the
// limit keeps 10 MB of garbage from costing more than a clear error.
const MaxStateSize = 1 << 20

// MaxConfigSize bounds config.json.
const MaxConfigSize = 8 << 20

// ErrBadState is wrapped by every error about the state itself.
var ErrBadState = errors.New("bad container state")

// ReadState reads the state JSON to EOF (a runtime may fail with EPIPE on hooks that stop
// reading early) and checks what the hook relies on. It does not check the pid: poststop
// has none.
func ReadState(r io.Reader) (specs.State, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxStateSize+1))
	if err != nil {
		return specs.State{}, fmt.Errorf("%w: read: %w", ErrBadState, err)
	}
	if len(b) > MaxStateSize {
		// Drain the rest so the runtime's write does not fail, then refuse.
		_, _ = io.Copy(io.Discard, r)
		return specs.State{}, fmt.Errorf("%w: more than %d bytes", ErrBadState, MaxStateSize)
	}
	if len(b) == 0 {
		return specs.State{}, fmt.Errorf("%w: empty input (is the hook run by a runtime?)", ErrBadState)
	}
	var s specs.State
	if err := json.Unmarshal(b, &s); err != nil {
		return specs.State{}, fmt.Errorf("%w: %w", ErrBadState, err)
	}
	if !ValidContainerID(s.ID) {
		return specs.State{}, fmt.Errorf("%w: container id %q is not a valid id", ErrBadState, clip.String(s.ID))
	}
	if s.Pid < 0 {
		return specs.State{}, fmt.Errorf("%w: negative pid %d", ErrBadState, s.Pid)
	}
	if s.Bundle != "" && !filepath.IsAbs(s.Bundle) {
		return specs.State{}, fmt.Errorf("%w: bundle %q is not an absolute path", ErrBadState, clip.String(s.Bundle))
	}
	return s, nil
}

// ReadSpec reads <bundle>/config.json: only the fields resctrl-mon uses (annotations,
// linux.cgroupsPath, linux.intelRdt), so the rest of the returned spec is empty.
func ReadSpec(bundle string) (*specs.Spec, error) {
	f, err := os.Open(filepath.Join(bundle, "config.json"))
	if err != nil {
		return nil, fmt.Errorf("bundle config: %w", err)
	}
	defer f.Close()
	var v specView
	dec := json.NewDecoder(io.LimitReader(f, MaxConfigSize))
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("bundle config %s: %w", f.Name(), err)
	}
	s := &specs.Spec{Annotations: v.Annotations}
	if v.Linux != nil {
		s.Linux = &specs.Linux{CgroupsPath: v.Linux.CgroupsPath, IntelRdt: v.Linux.IntelRdt}
	}
	return s, nil
}

// specView is the part of a spec ReadSpec decodes. The hook reads a container's spec on
// every createRuntime, in a fresh process, and encoding/json pays a reflection pass over
// every type it decodes once per process: the whole specs.Spec is dozens of nested types,
// each a pass on every call, and the hook needs three fields (docs/benchmarks.md, the OCI
// hook).
type specView struct {
	Annotations map[string]string `json:"annotations,omitempty"`
	Linux       *struct {
		CgroupsPath string               `json:"cgroupsPath,omitempty"`
		IntelRdt    *specs.LinuxIntelRdt `json:"intelRdt,omitempty"`
	} `json:"linux,omitempty"`
}

// CgroupsPath is the spec's linux.cgroupsPath, "" for none.
func CgroupsPath(s *specs.Spec) string {
	if s == nil || s.Linux == nil {
		return ""
	}
	return s.Linux.CgroupsPath
}

// ValidContainerID reports whether id is safe to use as (part of) a file name: runc's rule
// for ids ([A-Za-z0-9_.+-], not starting with a symbol), at most 200 bytes so that names
// derived from an id stay within NAME_MAX.
func ValidContainerID(id string) bool {
	if len(id) == 0 || len(id) > 200 {
		return false
	}
	for i := range len(id) {
		c := id[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || (c != '_' && c != '.' && c != '+' && c != '-')) {
			return false
		}
	}
	return true
}
