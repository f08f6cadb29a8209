// Package capture is the one way resctrl-mon's tests capture what a container runtime really
// sends: the record test/e2e/capturehook (an OCI hook) writes for each call (Write), and the
// reading of those records in the order the calls were made (Read). lib/identity's fixtures
// keep these records as they were written, for every runtime: runc, crun and podman through
// bundle hooks or a hooks.d directory, CRI-O through its hooks_dir, and containerd, which runs
// no hooks.d, as a Record of its bundle's config.json made with SpecOf.
package capture

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Record is one hook call: what the runtime wrote on the hook's stdin, as it wrote it, and
// what the bundle's config.json held that could tell a container's pod and role.
type Record struct {
	Stage string `json:"stage"`
	// State is empty only in a record made without a hook (a bundle read from disk).
	State json.RawMessage `json:"state,omitempty"`
	// Spec is nil when config.json could not be read; SpecError then says why.
	Spec      *Spec  `json:"spec,omitempty"`
	SpecError string `json:"specError,omitempty"`
	// ID is the state's container id, filled by Read; the state holds it, so it is not kept.
	ID string `json:"-"`
}

// Spec is the part of config.json kept: what could tell which pod a container belongs to and
// whether it is the pod's infra container.
type Spec struct {
	Annotations map[string]string      `json:"annotations"`
	Args        []string               `json:"args"`
	Hostname    string                 `json:"hostname"`
	CgroupsPath string                 `json:"cgroupsPath"`
	Namespaces  []specs.LinuxNamespace `json:"namespaces"`
}

// SpecOf keeps of a config.json what Spec holds.
func SpecOf(configJSON []byte) (*Spec, error) {
	var s specs.Spec
	if err := json.Unmarshal(configJSON, &s); err != nil {
		return nil, fmt.Errorf("config.json: %w", err)
	}
	out := &Spec{Annotations: s.Annotations, Hostname: s.Hostname}
	if s.Process != nil {
		out.Args = s.Process.Args
	}
	if s.Linux != nil {
		out.CgroupsPath, out.Namespaces = s.Linux.CgroupsPath, s.Linux.Namespaces
	}
	return out, nil
}

// DecodeState decodes the state the runtime sent.
func (r Record) DecodeState() (specs.State, error) {
	var st specs.State
	if err := json.Unmarshal(r.State, &st); err != nil {
		return st, fmt.Errorf("captured %s state %q: %w", r.Stage, r.State, err)
	}
	return st, nil
}

// Write records one call at stage whose state (as the runtime wrote it) arrived at time at,
// with the bundle's config.json as it is now, into dir. A record's file is named
// <at in nanoseconds, 20 digits>.<stage>.<id>.json, so that names sort in the order the calls
// came and no call overwrites another (a runtime that called a stage twice is seen to); it is
// written beside and renamed, so a reader never sees half a record. A bundle whose config.json
// cannot be read (podman may have removed it by poststop) is recorded as such.
func Write(dir, stage string, at time.Time, state []byte) error {
	if stage == "" || strings.ContainsAny(stage, "./") {
		return fmt.Errorf("stage %q is not a usable name", stage)
	}
	var st specs.State
	if err := json.Unmarshal(state, &st); err != nil {
		return fmt.Errorf("state %q: %w", state, err)
	}
	if st.ID == "" || st.ID != filepath.Base(st.ID) {
		return fmt.Errorf("state has no usable id: %q", st.ID)
	}
	rec := Record{Stage: stage, State: state}
	if spec, err := readSpec(st.Bundle); err != nil {
		rec.SpecError = err.Error()
	} else {
		rec.Spec = spec
	}
	out, err := json.MarshalIndent(rec, "", "\t")
	if err != nil {
		return fmt.Errorf("encode record: %w", err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%020d.%s.%s.json", at.UnixNano(), stage, st.ID))
	if err := os.WriteFile(path+".tmp", out, 0o644); err != nil {
		return fmt.Errorf("write record: %w", err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return fmt.Errorf("write record: %w", err)
	}
	return nil
}

func readSpec(bundle string) (*Spec, error) {
	if bundle == "" {
		return nil, errors.New("the state names no bundle")
	}
	b, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		return nil, err // it names the file and why
	}
	return SpecOf(b)
}

// Read returns the records in dir, in the order the calls were made, each with its ID.
func Read(dir string) ([]Record, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read records: %w", err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	recs := make([]Record, 0, len(names))
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return recs, fmt.Errorf("record %s: %w", name, err)
		}
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil {
			return recs, fmt.Errorf("record %s: %w", name, err)
		}
		st, err := rec.DecodeState()
		if err != nil {
			return recs, fmt.Errorf("record %s: %w", name, err)
		}
		rec.ID = st.ID
		recs = append(recs, rec)
	}
	return recs, nil
}
