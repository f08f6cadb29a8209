package registry

import (
	"os"
	"path/filepath"
	"testing"
)

func TestBindings(t *testing.T) {
	t.Parallel()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Bound, bound again elsewhere (replaced whole), unbound.
	for _, g := range []string{"g1", "g2"} {
		if err := s.BindContainer("c1", g); err != nil {
			t.Fatal(err)
		}
		if got, err := s.ContainerGroup("c1"); got != g || err != nil {
			t.Errorf("bound to %s: got %q, %v", g, got, err)
		}
	}
	if ids, err := s.Containers(); len(ids) != 1 || ids[0] != "c1" || err != nil {
		t.Errorf("containers: %v, %v (a temporary link left?)", ids, err)
	}
	if err := s.UnbindContainer("c1"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ContainerGroup("c1"); got != "" || err != nil {
		t.Errorf("unbound: %q, %v", got, err)
	}
	for _, bad := range [][2]string{{"", "g"}, {"a/b", "g"}, {".c", "g"}, {"c", ""}, {"c", "../g"}} {
		if err := s.BindContainer(bad[0], bad[1]); err == nil {
			t.Errorf("bind %q to %q: no error", bad[0], bad[1])
		}
	}
}

// A state dir written by an earlier version (a binding as a file holding the group's name)
// is read as before: a node upgraded while pods run keeps them.
func TestBindingWrittenAsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, containersDir, "old"), []byte("g-old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ContainerGroup("old"); got != "g-old" || err != nil {
		t.Errorf("old binding: %q, %v", got, err)
	}
	if err := s.BindContainer("old", "g-new"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ContainerGroup("old"); got != "g-new" || err != nil {
		t.Errorf("rebound: %q, %v", got, err)
	}
	if err := s.UnbindContainer("old"); err != nil {
		t.Fatal(err)
	}
}
