package config

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The configuration reference's table is what operators copy variable names from: every key
// that an environment variable can set must be in it with the name ApplyEnv accepts
// (resctrlRoot is RESCTRL_MON_RESCTRL_ROOT, not RESCTRL_MON_RESCTRLROOT, which is refused).
func TestReferenceTableNamesEveryVariable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(referencePage)
	if err != nil {
		t.Fatal(err)
	}
	rows := configTable(t, string(b))
	code := regexp.MustCompile("`([^`]*)`")
	cells := func(s string) []string {
		var out []string
		for _, m := range code.FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
		return out
	}
	for _, key := range Keys() {
		i := slices.IndexFunc(rows, func(r []string) bool { return slices.Contains(cells(r[0]), key) })
		if i < 0 {
			t.Errorf("%s: no row of the table names the key %s", referencePage, key)
			continue
		}
		if env := cells(rows[i][1]); !slices.Contains(env, EnvName(key)) {
			t.Errorf("%s: the row of %s names the variables %q, want %s", referencePage, key, env, EnvName(key))
		}
	}
}

// referencePage is the configuration reference, relative to this package.
const referencePage = "../../docs/reference/config.md"

// configTable returns the cells of the page's table whose header starts
// "| key | environment variable |".
func configTable(t *testing.T, section string) [][]string {
	t.Helper()
	var rows [][]string
	in := false
	for line := range strings.Lines(section) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "| key | environment variable |"):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			if len(cells) < 2 {
				t.Fatalf("%s: table row %q has fewer than 2 cells", referencePage, line)
			}
			rows = append(rows, cells)
		case in:
			return rows
		}
	}
	if !in {
		t.Fatalf(`%s: no table headed "| key | environment variable |"`, referencePage)
	}
	return rows
}

// Wherever the docs write a RESCTRL_MON_ variable, it is one ApplyEnv accepts: prose and the
// shipped config's comments drift as easily as the table.
func TestDocsNameOnlyRealVariables(t *testing.T) {
	t.Parallel()
	valid := map[string]bool{}
	for _, k := range Keys() {
		valid[EnvName(k)] = true
	}
	valid[ConfigEnv] = true // the config file's name, not a key
	// Anything that looks like a variable, placeholders such as RESCTRL_MON_<KEY> included;
	// the bare prefix is allowed (a sentence about the prefix itself).
	name := regexp.MustCompile(EnvPrefix + `[A-Za-z0-9_<>]*`)
	paths := []string{"../../README.md", "../../test/README.md", "../../install/config.yaml"}
	docs, err := filepath.Glob("../../docs/*/*.md")
	if err != nil {
		t.Fatal(err)
	}
	top, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no page under ../../docs: was the tree moved?")
	}
	for _, path := range slices.Concat(paths, top, docs) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range name.FindAllString(string(b), -1) {
			if v != EnvPrefix && !valid[v] {
				t.Errorf("%s names %s, which is no variable resctrl-mon reads (they are %s + the key in upper snake case)", path, v, EnvPrefix)
			}
		}
	}
}
