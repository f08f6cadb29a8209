package wrapper

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
)

// env writes a config naming runtime and returns the environment that points the wrapper at it.
func env(t *testing.T, runtime, extra string) (environ []string, dir string) {
	t.Helper()
	dir = t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	text := "runtime: " + runtime + "\nstateDir: " + filepath.Join(dir, "state") + "\nlog: file:" + filepath.Join(dir, "log") + "\n" + extra
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{config.ConfigEnv + "=" + cfg, "PATH=/bin"}, dir
}

func fakeRuntime(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "runc")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// Whatever the command, the runtime gets the command line as it was given.
func TestPrepareExecsTheRuntimeWithTheSameArguments(t *testing.T) {
	t.Parallel()
	rt := fakeRuntime(t)
	environ, dir := env(t, rt, "")
	bundle := filepath.Join(dir, "b")
	if err := os.Mkdir(bundle, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bundle, "config.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"runc", "--root", "/r", "state", "c1"},
		{"runc", "--future", "v", "create", "c1"},
		{"runc", "create", "--bundle", bundle, "c1"},
		{"runc", "exec", "--weird", "c1"},
		{"runc"},
	} {
		var stderr bytes.Buffer
		x, err := Prepare(args, environ, 1, &stderr)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if x.Path != rt || !slices.Equal(x.Argv[1:], args[1:]) || x.Argv[0] != rt {
			t.Errorf("%q: exec %s %q, want %s with the same arguments", args, x.Path, x.Argv, rt)
		}
	}
	b, _ := os.ReadFile(filepath.Join(bundle, "config.json"))
	if !strings.Contains(string(b), HookName) {
		t.Errorf("create did not list the hook: %s", b)
	}
}

func TestPrepareMissingRuntime(t *testing.T) {
	t.Parallel()
	environ, _ := env(t, "/nonexistent/runc", "")
	var stderr bytes.Buffer
	if _, err := Prepare([]string{"runc", "state", "c1"}, environ, 1, &stderr); !errors.Is(err, ErrRuntime) {
		t.Fatalf("%v, want ErrRuntime", err)
	}
	if !strings.Contains(stderr.String(), "/nonexistent/runc") || !strings.Contains(stderr.String(), "config key runtime") {
		t.Errorf("stderr does not say which runtime is missing: %q", stderr.String())
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	environ, _ = env(t, self, "")
	if _, err := Prepare([]string{"runc", "state", "c1"}, environ, 1, &stderr); !errors.Is(err, ErrRuntime) {
		t.Errorf("the wrapper as its own runtime: %v, want ErrRuntime", err)
	}
}

// A failure of the wrapper's own (here: a create whose bundle has no spec to list the hooks
// in) runs the runtime anyway, logged, unless failurePolicy is closed.
func TestPrepareFailurePolicy(t *testing.T) {
	t.Parallel()
	rt := fakeRuntime(t)
	args := []string{"runc", "create", "--bundle", "/nonexistent/bundle", "c1"}
	environ, dir := env(t, rt, "")
	if _, err := Prepare(args, environ, 1, &bytes.Buffer{}); err != nil {
		t.Errorf("fail-open: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "log")); !strings.Contains(string(b), "action=failed") || !strings.Contains(string(b), "/nonexistent/bundle") {
		t.Errorf("the log does not say why nothing was done: %s", b)
	}
	environ, _ = env(t, rt, "failurePolicy: closed\n")
	var stderr bytes.Buffer
	if _, err := Prepare(args, environ, 1, &stderr); err == nil || !strings.Contains(stderr.String(), "failurePolicy: closed") {
		t.Errorf("fail-closed: %v, stderr %q", err, stderr.String())
	}
}

// An exec of a container the registry has no group for does nothing.
func TestFindGroupNoGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, stateDir := range []string{filepath.Join(dir, "missing"), dir} {
		if g, err := findGroup(stateDir, "c1"); g.Path != "" || err != nil {
			t.Errorf("state dir %s: %+v, %v; want nothing done", stateDir, g, err)
		}
	}
}

func TestGuardedTurnsAPanicIntoAnError(t *testing.T) {
	t.Parallel()
	_, err := guarded(func() (result, error) { panic("boom") })
	if !errors.Is(err, ErrPanic) || !strings.Contains(err.Error(), "boom") {
		t.Errorf("%v, want ErrPanic saying boom", err)
	}
	if r, err := guarded(func() (result, error) { return result{action: "placed"}, nil }); err != nil || r.action != "placed" {
		t.Errorf("%+v, %v", r, err)
	}
}
