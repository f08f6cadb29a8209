package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The hook's command line: usage errors are exit 2 whatever the policy; flags override the
// file and reach the hook (here: a resctrl root that does not exist, under each policy).
func TestRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	text := "stateDir: " + dir + "/state\nlog: file:" + dir + "/hook.log\nfailurePolicy: open\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	state := `{"ociVersion":"1.0.2","id":"c1","status":"creating","pid":1,"bundle":""}`
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no stage", []string{"--config", cfg}, 2, "want one stage"},
		{"unknown stage", []string{"--config", cfg, "prestart"}, 2, `got ["prestart"]`},
		{"two stages", []string{"--config", cfg, "createRuntime", "poststop"}, 2, "want one stage"},
		{"unknown flag", []string{"--config", cfg, "--nope", "x", "createRuntime"}, 2, "flag provided but not defined: -nope"},
		{"help", []string{"--help"}, 0, "usage: resctrl-mon-hook"},
		{"open", []string{"--config", cfg, "--resctrlRoot", dir + "/none", "createRuntime"}, 0, ""},
		{"closed by flag", []string{"--config", cfg, "--resctrlRoot", dir + "/none", "--failurePolicy", "closed", "createRuntime"}, 1, "failurePolicy: closed"},
		{"bad flag value", []string{"--config", cfg, "--retention", "soon", "--failurePolicy", "closed", "createRuntime"}, 1, "retention"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(tc.args, strings.NewReader(state), &stderr)
			if code != tc.code || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr.String(), tc.code, tc.stderr)
			}
		})
	}
	log, err := os.ReadFile(filepath.Join(dir, "hook.log"))
	if err != nil || !strings.Contains(string(log), dir+"/none") {
		t.Errorf("the hook log does not name the missing root: %q (%v)", log, err)
	}
}
