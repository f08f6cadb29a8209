package config

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseOverDefaults(t *testing.T) {
	t.Parallel()
	c, err := Parse(strings.NewReader(`
resctrlRoot: /tmp/r
retention: 90s
granularity: container
namespaces:
  exclude: [kube-system]
annotations:
  optIn: example.com/monitor
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.ResctrlRoot != "/tmp/r" || time.Duration(c.Retention) != 90*time.Second || c.Granularity != PerContainer {
		t.Errorf("parsed %+v", c)
	}
	if c.StateDir != Default().StateDir || c.Annotations.OptOut != Default().Annotations.OptOut {
		t.Errorf("defaults lost: %+v", c)
	}
	if len(c.Namespaces.Exclude) != 1 || c.Annotations.OptIn != "example.com/monitor" {
		t.Errorf("nested keys: %+v", c)
	}
}

func TestBadConfigNamesTheKey(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"retentoin: 5m":                "retentoin",
		"retention: soon":              "duration",
		"granularity: node":            `"granularity"`,
		"failurePolicy: maybe":         `"failurePolicy"`,
		"resctrlRoot: relative/path":   `"resctrlRoot"`,
		"noPod: drop":                  `"noPod"`,
		"log: udp://x":                 `"log"`,
		"snapshotMaxCount: -1":         `"snapshotMaxCount"`,
		"mbmAssignment: busiest":       `"mbmAssignment"`,
		"mbmAssignmentHold: -1m":       `"mbmAssignmentHold"`,
		"mbmAssignmentAnnotation: a b": `"mbmAssignmentAnnotation"`,
		"namespaces: {include: [a/b]}": `"namespaces.include"`,
		"[1, 2":                        "parse config",
		"FailurePolicy: closed":        `"FailurePolicy" (did you mean "failurePolicy"?)`,
		"namespaces: {Include: [a]}":   `"namespaces.Include" (did you mean "namespaces.include"?)`,
	} {
		c, err := Parse(strings.NewReader(text))
		if err == nil {
			err = c.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error naming %s", text, err, want)
		}
	}
	if _, err := Parse(strings.NewReader(strings.Repeat("#", maxFileSize+1))); err == nil {
		t.Errorf("an oversized config was accepted")
	}
}

func TestLoadPrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte("retention: 1m\nstateDir: /tmp/from-file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, []string{"RESCTRL_MON_RETENTION=2m", "PATH=/bin", "RESCTRL_MON_FAILURE_POLICY=closed"})
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(c.Retention) != 2*time.Minute || c.StateDir != "/tmp/from-file" || c.FailurePolicy != FailClosed {
		t.Errorf("precedence: %+v", c)
	}
	if err := c.Set("resctrlRoot", "/x"); err != nil || c.ResctrlRoot != "/x" {
		t.Errorf("Set: %v, %q", err, c.ResctrlRoot)
	}
	if _, err := Load(path, []string{"RESCTRL_MON_RETENSION=1m"}); err == nil || !strings.Contains(err.Error(), "RESCTRL_MON_RETENSION") {
		t.Errorf("unknown variable: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml"), nil); err == nil {
		t.Errorf("a named missing file was accepted")
	}
	if EnvName("snapshotMaxAge") != "RESCTRL_MON_SNAPSHOT_MAX_AGE" {
		t.Errorf("EnvName = %s", EnvName("snapshotMaxAge"))
	}
}

// FuzzParse: a config that parses and validates is the same config when written back
// (JSON is YAML too), so what the file said is what resctrl-mon runs with; and the failure
// policy a broken file would fall back to (PolicyHint) is never one the file did not say.
func FuzzParse(f *testing.F) {
	f.Add("retention: 5m\n")
	f.Add("namespaces: {include: [a]}\nannotations: {optIn: x}\n")
	f.Add("{}")
	f.Add("mbmAssignment: policy\nmbmAssignmentHold: 30s\nmbmAssignmentAnnotation: x/y\n")
	f.Add("failurePolicy: closed\nretention: 0s\nruntimeRoots: []\n")
	f.Add("failurePolicy: closed\nfailurepolicy: open\n")
	f.Add("FailurePolicy: closed\n")
	f.Add("hookBudget: 1h\nsnapshotMaxAge: 1.5h\nnamespaces: {exclude: [kube-system]}\n")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(strings.NewReader(s))
		if err != nil {
			return
		}
		if c.Validate() != nil {
			return
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(bytes.NewReader(b))
		if err != nil || !reflect.DeepEqual(again, c) {
			t.Errorf("%q parsed to %+v; written back as %s it parses to %+v, %v", s, c, b, again, err)
		}
		if hint := hintOf(s); hint != "" && hint != c.FailurePolicy {
			t.Errorf("%q: the config's failure policy is %q, the hint says %q", s, c.FailurePolicy, hint)
		}
	})
}

// The shipped example states every default: it must parse to exactly Default().
func TestShippedConfigIsTheDefaults(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../../install/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	want := Default()
	if c.RMIDReclaim != want.RMIDReclaim || !slices.Equal(c.MBMAssignmentNamespaces, want.MBMAssignmentNamespaces) ||
		c.ResctrlRoot != want.ResctrlRoot || c.StateDir != want.StateDir || c.SnapshotDir != want.SnapshotDir ||
		c.Retention != want.Retention || !reflect.DeepEqual(c.Annotations, want.Annotations) || c.Log != want.Log ||
		c.FailurePolicy != want.FailurePolicy || c.HookBudget != want.HookBudget || c.SnapshotMaxAge != want.SnapshotMaxAge || c.SnapshotMaxCount != want.SnapshotMaxCount ||
		!slices.Equal(c.RuntimeRoots, want.RuntimeRoots) || c.Granularity != want.Granularity || c.NoPod != want.NoPod ||
		c.Runtime != want.Runtime || c.RuntimeHook != want.RuntimeHook {
		t.Errorf("install/config.yaml = %+v, defaults are %+v", c, want)
	}
}

func TestPolicyHint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for text, want := range map[string]FailurePolicy{
		"failurePolicy: closed\nretention: soon\n": FailClosed,
		"failurePolicy: open\nbogus: 1\n":          FailOpen,
		"failurePolicy: sometimes\n":               "",
		"[":                                        "",
	} {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := PolicyHint(path); got != want {
			t.Errorf("%q: %q, want %q", text, got, want)
		}
	}
}

// The environment is outside input too: whatever the variables hold, ApplyEnv either applies
// them or names the variable it refused, and never panics.
func FuzzApplyEnv(f *testing.F) {
	f.Add("RETENTION", "5m")
	f.Add("SNAPSHOT_MAX_COUNT", "x")
	f.Add("NOPE", "1")
	f.Fuzz(func(t *testing.T, name, val string) {
		if strings.Contains(name, "=") {
			t.Skip("a variable's name ends at its first =")
		}
		c := Default()
		v := EnvPrefix + name
		err := c.ApplyEnv([]string{v + "=" + val})
		if err != nil && !strings.Contains(err.Error(), v) {
			t.Errorf("%s=%q: the error does not name the variable: %v", v, val, err)
		}
		if err == nil {
			_ = c.Validate()
		}
	})
}

// The config file's name comes from --config, else RESCTRL_MON_CONFIG, else DefaultPath; the
// variable names a file, so it is no key and ApplyEnv does not refuse it.
func TestConfigEnvNamesTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte("runtime: /opt/crun\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Resolve("", []string{ConfigEnv + "=" + path}, nil)
	if err != nil || c.Runtime != "/opt/crun" {
		t.Errorf("from %s: runtime %q, %v; want /opt/crun", ConfigEnv, c.Runtime, err)
	}
	if got := Path("/flag.yaml", []string{ConfigEnv + "=" + path}); got != "/flag.yaml" {
		t.Errorf("--config lost to the variable: %q", got)
	}
	if _, err := Load("", []string{ConfigEnv + "=" + filepath.Join(dir, "missing.yaml")}); err == nil {
		t.Errorf("a missing file named by %s was accepted", ConfigEnv)
	}
	for _, bad := range []string{"runtime: runc", "runtimeHook: hook"} {
		c, err := Parse(strings.NewReader(bad))
		if err == nil {
			err = c.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), "not an absolute path") {
			t.Errorf("%q: %v, want a relative path refused", bad, err)
		}
	}
}
