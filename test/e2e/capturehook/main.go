// Command capturehook is an OCI hook that records what a runtime really sends: the state it
// writes on stdin, as it wrote it, and the parts of the bundle's config.json that could tell
// which pod a container belongs to and whether it is the pod's infra container (annotations,
// process.args, hostname, linux.cgroupsPath, linux.namespaces). The identity fixtures in
// lib/identity/testdata are made from its records, so they are what runc, crun and podman
// sent, not what we believe they send.
//
// Usage: capturehook DIR STAGE, with the state on stdin. Each call writes DIR/<id>.<STAGE>.json
// (written beside and renamed, so a reader never sees half a record). A bundle whose
// config.json cannot be read (podman may have removed it by poststop) is recorded as such.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Record is one call. Its JSON form is what test/e2e's Capture reads.
type Record struct {
	Stage string          `json:"stage"`
	State json.RawMessage `json:"state"`
	// Spec is nil when config.json could not be read; SpecError then says why.
	Spec      *Spec  `json:"spec,omitempty"`
	SpecError string `json:"specError,omitempty"`
}

// Spec is the part of config.json kept.
type Spec struct {
	Annotations map[string]string      `json:"annotations"`
	Args        []string               `json:"args"`
	Hostname    string                 `json:"hostname"`
	CgroupsPath string                 `json:"cgroupsPath"`
	Namespaces  []specs.LinuxNamespace `json:"namespaces"`
}

func main() {
	if err := run(); err != nil {
		// runc shows a failing hook's stderr; crun drops it, but the container then fails to
		// start, which the capturing test sees.
		fmt.Fprintln(os.Stderr, "capturehook:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 3 {
		return fmt.Errorf("usage: capturehook DIR STAGE (state on stdin)")
	}
	dir, stage := os.Args[1], os.Args[2]
	// To EOF: a runtime may fail with EPIPE on a hook that stops reading early.
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		return fmt.Errorf("read state: %w", err)
	}
	var st specs.State
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("state %q: %w", raw, err)
	}
	if st.ID == "" || st.ID != filepath.Base(st.ID) {
		return fmt.Errorf("state has no usable id: %q", st.ID)
	}
	rec := Record{Stage: stage, State: raw}
	if spec, err := readSpec(st.Bundle); err != nil {
		rec.SpecError = err.Error()
	} else {
		rec.Spec = spec
	}
	out, err := json.MarshalIndent(rec, "", "\t")
	if err != nil {
		return fmt.Errorf("encode record: %w", err)
	}
	path := filepath.Join(dir, st.ID+"."+stage+".json")
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
		return nil, fmt.Errorf("the state names no bundle")
	}
	b, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		return nil, err
	}
	var s specs.Spec
	if err := json.Unmarshal(b, &s); err != nil {
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
