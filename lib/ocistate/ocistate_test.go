package ocistate

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestReadState(t *testing.T) {
	t.Parallel()
	// What runc 1.1.5 passes to a createRuntime hook.
	st, err := ReadState(strings.NewReader(`{"ociVersion":"1.0.2-dev","id":"t1","status":"creating","pid":5254,"bundle":"/path/to/bundle","annotations":{"a":"b"}}`))
	if err != nil || st.ID != "t1" || st.Pid != 5254 || st.Annotations["a"] != "b" {
		t.Fatalf("got %+v, %v", st, err)
	}
	for name, in := range map[string]string{
		"empty":           "",
		"truncated":       `{"id":"t1","pid":`,
		"garbage":         strings.Repeat("\x00garbage", 2<<20),
		"no id":           `{"pid":1}`,
		"slash in id":     `{"id":"../x","pid":1}`,
		"negative pid":    `{"id":"t1","pid":-4}`,
		"relative bundle": `{"id":"t1","pid":1,"bundle":"rel"}`,
		"array":           `[1,2]`,
	} {
		if _, err := ReadState(strings.NewReader(in)); !errors.Is(err, ErrBadState) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzReadState(f *testing.F) {
	f.Add(`{"id":"t1","pid":1,"annotations":{"io.kubernetes.pod.uid":"x"}}`)
	f.Add(`{"id":"c","status":"stopped"}`)
	f.Fuzz(func(t *testing.T, in string) {
		st, err := ReadState(strings.NewReader(in))
		if err == nil && (!ValidContainerID(st.ID) || st.Pid < 0 || (st.Bundle != "" && !filepath.IsAbs(st.Bundle))) {
			t.Errorf("accepted %+v", st)
		}
	})
}

// A spec as runc's `runc spec` writes it, with the fields resctrl-mon reads set: ReadSpec
// returns exactly those, and refuses what is not JSON or too big.
func TestReadSpec(t *testing.T) {
	t.Parallel()
	full := specs.Spec{
		Version:     "1.0.2",
		Process:     &specs.Process{Args: []string{"sh"}, Cwd: "/", Env: []string{"PATH=/bin"}},
		Root:        &specs.Root{Path: "rootfs", Readonly: true},
		Hostname:    "c",
		Mounts:      []specs.Mount{{Destination: "/proc", Type: "proc", Source: "proc"}},
		Annotations: map[string]string{"io.kubernetes.pod.uid": "u"},
		Linux: &specs.Linux{
			CgroupsPath: "/pod/c1",
			IntelRdt:    &specs.LinuxIntelRdt{ClosID: "gold"},
			Namespaces:  []specs.LinuxNamespace{{Type: specs.PIDNamespace}},
			Resources:   &specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}}},
		},
	}
	bundle := writeSpec(t, mustMarshal(t, full))
	s, err := ReadSpec(bundle)
	if err != nil {
		t.Fatal(err)
	}
	if Class(IntelRdt(s), "c1") != "gold" || s.Linux.CgroupsPath != "/pod/c1" || s.Annotations["io.kubernetes.pod.uid"] != "u" {
		t.Errorf("read %+v / %+v", s, s.Linux)
	}
	if none, err := ReadSpec(writeSpec(t, []byte(`{"ociVersion":"1.0.2"}`))); err != nil || Class(IntelRdt(none), "c1") != "" {
		t.Errorf("a spec without linux: %+v, %v", none, err)
	}
	for name, in := range map[string][]byte{
		"not JSON":   []byte("garbage"),
		"truncated":  []byte(`{"linux":{"intelRdt":`),
		"wrong type": []byte(`{"linux":{"intelRdt":{"closID":5}}}`),
		"too big":    append([]byte(`{"annotations":{"a":"`), bytes.Repeat([]byte("x"), MaxConfigSize)...),
	} {
		if _, err := ReadSpec(writeSpec(t, in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := ReadSpec(t.TempDir()); err == nil {
		t.Errorf("a bundle without config.json: accepted")
	}
}

// FuzzReadSpec: ReadSpec decodes a narrow view of the spec (for speed); whenever the full
// runtime-spec type reads the same bytes, the view must have read the same annotations,
// cgroupsPath and intelRdt.
func FuzzReadSpec(f *testing.F) {
	f.Add([]byte(`{"ociVersion":"1.0.2","annotations":{"a":"b"},"linux":{"cgroupsPath":"/x","intelRdt":{"closID":"gold"}}}`))
	f.Add([]byte(`{"linux":null}`))
	f.Add([]byte(`{"linux":{"intelRdt":null,"cgroupsPath":""},"annotations":{}}`))
	f.Add([]byte(`{"Annotations":{"a":"b"},"LINUX":{"CGROUPSPATH":"/y"}}`))
	f.Add([]byte(`{"annotations":{"a":"1","a":"2"}} trailing`))
	f.Add(mustMarshal(f, specs.Spec{Version: "1.0.2", Process: &specs.Process{Args: []string{"sh"}},
		Linux: &specs.Linux{CgroupsPath: "system.slice:crio:abc", IntelRdt: &specs.LinuxIntelRdt{ClosID: "/", L3CacheSchema: "L3:0=f"}}}))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := ReadSpec(writeSpec(t, in))
		if err != nil {
			return
		}
		var full specs.Spec
		if json.NewDecoder(bytes.NewReader(in)).Decode(&full) != nil {
			return // the view reads only its fields: a bad one elsewhere is not its business
		}
		if !reflect.DeepEqual(s.Annotations, full.Annotations) {
			t.Errorf("annotations %v, the full spec has %v", s.Annotations, full.Annotations)
		}
		if (s.Linux == nil) != (full.Linux == nil) {
			t.Fatalf("linux %+v, the full spec has %+v", s.Linux, full.Linux)
		}
		if s.Linux != nil && (s.Linux.CgroupsPath != full.Linux.CgroupsPath || !reflect.DeepEqual(s.Linux.IntelRdt, full.Linux.IntelRdt)) {
			t.Errorf("linux %+v, the full spec has cgroupsPath %q intelRdt %+v", s.Linux, full.Linux.CgroupsPath, full.Linux.IntelRdt)
		}
		if a, b := Class(IntelRdt(s), "c1"), Class(IntelRdt(&full), "c1"); a != b {
			t.Errorf("class %q, the full spec's is %q", a, b)
		}
	})
}

func writeSpec(t *testing.T, b []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
