package config

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

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
