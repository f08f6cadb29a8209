package registry

import (
	"strings"
	"testing"
)

func TestValidContainerName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"app", true},
		{"a", true},
		{"istio-proxy", true},
		{"hopeful_curie", true}, // podman's generated names
		{"My.Container-1", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
		{"", false},
		{"-app", false},
		{"_app", false},
		{".app", false},
		{"a/b", false},
		{"a b", false},
		{`a"b`, false},
		{"a\nb", false},
		{"a\x00", false},
		{"ápp", false},
		{"a=b", false},
		{"a,b", false},
		{"a{b}", false},
	} {
		if got := ValidContainerName(c.name); got != c.ok {
			t.Errorf("ValidContainerName(%q) = %v, want %v", c.name, got, c.ok)
		}
	}
}

func TestSetName(t *testing.T) {
	t.Parallel()
	var r Record
	r.SetName("c1", "app")
	r.SetName("c2", "bad name")
	if r.Name("c1") != "app" || r.Name("c2") != "" {
		t.Fatalf("names %v", r.Names)
	}
	// A name that no longer fits forgets the old one: the id stands for the container.
	r.SetName("c1", strings.Repeat("x", 64))
	if n, ok := r.Names["c1"]; ok {
		t.Errorf("c1 still named %q", n)
	}
}

// A record's names are read from a file: only valid names of recorded containers are kept,
// and a record written before names were recorded reads with none.
func TestParseRecordNames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		about, json string
		want        map[string]string
	}{
		{"older version: no names", `{"group":"g","containers":{"c1":"2026-01-01T00:00:00Z"}}`, nil},
		{"valid", `{"group":"g","containers":{"c1":"2026-01-01T00:00:00Z","c2":"2026-01-01T00:00:00Z"},"names":{"c1":"app","c2":"sidecar"}}`,
			map[string]string{"c1": "app", "c2": "sidecar"}},
		{"invalid dropped", `{"group":"g","containers":{"c1":"2026-01-01T00:00:00Z","c2":"2026-01-01T00:00:00Z"},"names":{"c1":"app","c2":"x\"} 1\nevil{a=\""}}`,
			map[string]string{"c1": "app"}},
		{"too long dropped", `{"group":"g","containers":{"c1":"2026-01-01T00:00:00Z"},"names":{"c1":"` + strings.Repeat("a", 64) + `"}}`, nil},
		{"no such container", `{"group":"g","containers":{"c1":"2026-01-01T00:00:00Z"},"names":{"c9":"app"}}`, nil},
	} {
		r, err := ParseRecord([]byte(c.json))
		if err != nil {
			t.Errorf("%s: %v", c.about, err)
			continue
		}
		if len(r.Names) != len(c.want) {
			t.Errorf("%s: names %v, want %v", c.about, r.Names, c.want)
			continue
		}
		for id, n := range c.want {
			if r.Name(id) != n {
				t.Errorf("%s: %s named %q, want %q", c.about, id, r.Name(id), n)
			}
		}
	}
}
