package registry

import (
	"os"
	"path/filepath"
	"testing"
)

// A container id comes from the runtime or NRI: one that is not a plain file name must never
// reach a path. `..` in an id would otherwise unlink another pod's lock, or read its record as
// a binding.
func TestContainerIDsNeverLeaveTheBindings(t *testing.T) {
	t.Parallel()
	s, err := Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(s.Dir(), locksDir, "podA.lock")
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(s.Dir(), groupsDir, "podA.json")
	if err := os.WriteFile(record, []byte(`{"group":"podA"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"../locks/podA.lock", "..", ".", "", "a/b", "a\x00b", ".tmp-x"} {
		if err := s.UnbindContainer(id); err == nil {
			t.Errorf("UnbindContainer(%q): no error", id)
		}
		if g, err := s.ContainerGroup(id); err == nil {
			t.Errorf("ContainerGroup(%q) = %q, no error", id, g)
		}
		if err := s.BindContainer(id, "podA"); err == nil {
			t.Errorf("BindContainer(%q): no error", id)
		}
	}
	if g, err := s.ContainerGroup("../groups/podA.json"); err == nil {
		t.Errorf("ContainerGroup read a record as a binding: %q", g)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("another pod's lock: %v", err)
	}
	// A real id still works.
	id := "0123456789abcdef"
	if err := s.BindContainer(id, "podA"); err != nil {
		t.Fatal(err)
	}
	if g, err := s.ContainerGroup(id); err != nil || g != "podA" {
		t.Errorf("ContainerGroup(%s) = %q, %v", id, g, err)
	}
	if err := s.UnbindContainer(id); err != nil {
		t.Error(err)
	}
}

func FuzzContainerID(f *testing.F) {
	for _, s := range []string{"abc", "..", "../x", ".tmp-1", "", "a/b", "ctr\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if checkContainerID(id) != nil {
			return
		}
		// An id accepted is one path component of the bindings directory, never hidden.
		if filepath.Base(id) != id || id == "." || id == ".." || id[0] == '.' || filepath.Join("/b", id) != "/b/"+id {
			t.Errorf("%q accepted", id)
		}
	})
}
