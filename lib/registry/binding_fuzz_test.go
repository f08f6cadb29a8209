package registry

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A container id comes from the runtime or over NRI, the group name from the placement:
// whatever they are, an id the store takes is one binding, a plain name inside the bindings
// directory, read back as the group it was bound to, listed, and gone after its unbinding;
// nothing else of the state dir is made or removed. An id one call refuses, every call
// refuses, with an error naming it.
func FuzzContainerBinding(f *testing.F) {
	for _, s := range [][2]string{
		{"0123456789abcdef", "0f8b2c1e-1111-2222-3333-444455556666"},
		{"..", "g"}, {".", "g"}, {"../pods/x.lock", "g"}, {"a/b", "g"}, {"a\x00b", "g"},
		{".tmp-x-1", "g"}, {"", "g"}, {"c1", ""}, {"c1", "a/b"}, {"c1", "..."},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, id, group string) {
		dir := t.TempDir()
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		before := tree(t, dir)
		valid := checkContainerID(id) == nil
		berr := s.BindContainer(id, group)
		g, gerr := s.ContainerGroup(id)
		if !valid {
			uerr := s.UnbindContainer(id)
			if berr == nil || gerr == nil || uerr == nil {
				t.Fatalf("id %q refused by the check, taken by a call: bind %v, group %v, unbind %v", id, berr, gerr, uerr)
			}
			if got := tree(t, dir); !slices.Equal(got, before) {
				t.Errorf("a refused id %q changed the state dir: %v, was %v", id, got, before)
			}
			return
		}
		if gerr != nil {
			t.Fatalf("ContainerGroup(%q): %v", id, gerr)
		}
		if berr != nil {
			if g != "" {
				t.Errorf("a refused binding of %q reads back as %q", id, g)
			}
			return
		}
		if g != group {
			t.Errorf("%q bound to %q reads back as %q", id, group, g)
		}
		want := append(slices.Clone(before), filepath.Join(containersDir, id))
		slices.Sort(want)
		if got := tree(t, dir); !slices.Equal(got, want) {
			t.Errorf("binding %q made %v, want %v", id, got, want)
		}
		if ids, err := s.Containers(); err != nil || !slices.Equal(ids, []string{id}) {
			t.Errorf("Containers() = %v, %v, want [%q]", ids, err, id)
		}
		if err := s.UnbindContainer(id); err != nil {
			t.Fatal(err)
		}
		if g, err := s.ContainerGroup(id); g != "" || err != nil {
			t.Errorf("after its unbinding %q reads back as %q, %v", id, g, err)
		}
		if got := tree(t, dir); !slices.Equal(got, before) {
			t.Errorf("after unbinding %q the state dir holds %v, was %v", id, got, before)
		}
	})
}

// tree lists every path under dir, sorted.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(dir, p); rel != "." {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
