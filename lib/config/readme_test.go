package config

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The README's Configuration table is what operators copy variable names from: every key
// that an environment variable can set must be in it with the name ApplyEnv accepts
// (resctrlRoot is RESCTRL_MON_RESCTRL_ROOT, not RESCTRL_MON_RESCTRLROOT, which is refused).
func TestReadmeTableNamesEveryVariable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
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
			t.Errorf("README: no row of the Configuration table names the key %s", key)
			continue
		}
		if env := cells(rows[i][1]); !slices.Contains(env, EnvName(key)) {
			t.Errorf("README: the row of %s names the variables %q, want %s", key, env, EnvName(key))
		}
	}
}

// configTable returns the cells of the table in the README's "### Configuration" section whose
// header starts "| key | environment variable |".
func configTable(t *testing.T, readme string) [][]string {
	t.Helper()
	_, section, ok := strings.Cut(readme, "\n### Configuration\n")
	if !ok {
		t.Fatal("README: no ### Configuration section")
	}
	section, _, _ = strings.Cut(section, "\n#")
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
				t.Fatalf("README: table row %q has fewer than 2 cells", line)
			}
			rows = append(rows, cells)
		case in:
			return rows
		}
	}
	if !in {
		t.Fatal(`README: the Configuration section has no table headed "| key | environment variable |"`)
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
	for _, path := range []string{"../../README.md", "../../install/config.yaml"} {
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
