package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/hooks/hook"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs/kernel"
)

// The hook's worker is this test binary (see hook.WorkerArg).
func TestMain(m *testing.M) {
	hook.WorkIfAsked(kernel.Open)
	os.Exit(m.Run())
}

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
			code := run(time.Now(), nil, tc.args, strings.NewReader(state), &stderr)
			// No stderr wanted is none at all: fail-open says nothing to the runtime.
			if code != tc.code || !strings.Contains(stderr.String(), tc.stderr) || (tc.stderr == "" && stderr.Len() != 0) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr.String(), tc.code, tc.stderr)
			}
		})
	}
	log, err := os.ReadFile(filepath.Join(dir, "hook.log"))
	if err != nil || !strings.Contains(string(log), dir+"/none") {
		t.Errorf("the hook log does not name the missing root: %q (%v)", log, err)
	}
}

// The command line comes from a hooks.d JSON or a config.json someone wrote: whatever it
// holds, parsing it never panics, and what it accepts is one stage and known keys.
func FuzzParseArgs(f *testing.F) {
	f.Add("--config\x00/etc/x.yaml\x00createRuntime")
	f.Add("--retention\x005m\x00poststop")
	f.Add("-h")
	f.Add("createRuntime\x00poststop")
	f.Fuzz(func(t *testing.T, joined string) {
		inv, err := parseArgs(strings.Split(joined, "\x00"), io.Discard)
		if err != nil {
			return
		}
		if inv.stage != "createRuntime" && inv.stage != "poststop" {
			t.Errorf("accepted stage %q", inv.stage)
		}
		keys := config.Keys()
		for k := range inv.set {
			if !slices.Contains(keys, k) {
				t.Errorf("accepted unknown key %q", k)
			}
		}
	})
}
