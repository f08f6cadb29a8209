package wrapper

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func testHooks() map[string]specs.Hook {
	timeout := 10
	out := map[string]specs.Hook{}
	for _, s := range []string{"createRuntime", "poststop"} {
		out[s] = specs.Hook{Path: "/opt/x/" + HookName, Args: []string{HookName, "--hookBudget", "8s", s}, Timeout: &timeout}
	}
	return out
}

func TestAddHooks(t *testing.T) {
	t.Parallel()
	other := `{"path":"/bin/other","args":["other","x<y&z"]}`
	for _, tc := range []struct {
		name, spec string
		added      []string
	}{
		{"no hooks", `{"ociVersion":"1.0.2","process":{"args":["sh"]}}`, []string{"createRuntime", "poststop"}},
		{"null hooks", `{"hooks":null}`, []string{"createRuntime", "poststop"}},
		{"other hooks kept", `{"hooks":{"createRuntime":[` + other + `],"prestart":[` + other + `]}}`, []string{"createRuntime", "poststop"}},
		{"ours already (another path)", `{"hooks":{"createRuntime":[{"path":"/usr/libexec/oci/hooks.d/resctrl-mon-hook","args":["resctrl-mon-hook","createRuntime"]}],
			"poststop":[{"path":"/p/resctrl-mon-hook","args":["resctrl-mon-hook","poststop"]}]}}`, nil},
		{"ours as a hooks.d prestart (CRI-O)", `{"hooks":{"prestart":[{"path":"/p/resctrl-mon-hook","args":["resctrl-mon-hook","createRuntime"]}]}}`, []string{"poststop"}},
		{"ours by argv[0] and by the configured path", `{"hooks":{"createRuntime":[{"path":"/build/hooks","args":["resctrl-mon-hook","createRuntime"]}],
			"poststop":[{"path":"/opt/x/resctrl-mon-hook","args":["x","poststop"]}]}}`, nil},
		{"same name, other stage", `{"hooks":{"createRuntime":[{"path":"/p/resctrl-mon-hook","args":["resctrl-mon-hook","poststop"]}]}}`, []string{"createRuntime", "poststop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, added, err := addHooks([]byte(tc.spec), testHooks())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(added, tc.added) {
				t.Fatalf("added %v, want %v", added, tc.added)
			}
			if len(added) == 0 {
				if out != nil {
					t.Errorf("nothing added, yet new bytes: %s", out)
				}
				return
			}
			var before, after map[string]any
			if err := json.Unmarshal([]byte(tc.spec), &before); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &after); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, out)
			}
			// Every field but hooks is the same, and every hook there was is still there.
			for k, v := range before {
				if k == "hooks" {
					continue
				}
				if a, _ := json.Marshal(after[k]); !bytes.Equal(a, mustJSON(t, v)) {
					t.Errorf("field %s changed: %s → %s", k, mustJSON(t, v), a)
				}
			}
			if strings.Contains(tc.spec, other) && strings.Count(string(out), other) != strings.Count(tc.spec, other) {
				t.Errorf("another hook changed or lost (the HTML characters must stay):\n%s", out)
			}
			// A second call finds them: nothing more is added.
			if again, added2, err := addHooks(out, testHooks()); err != nil || len(added2) != 0 || again != nil {
				t.Errorf("second call added %v (%v)", added2, err)
			}
		})
	}
}

// Fields no spec version knows, numbers of any precision and the order within lists are
// kept as they were.
func TestAddHooksKeepsUnknownFields(t *testing.T) {
	t.Parallel()
	spec := `{"ociVersion": "1.3.0", "x-future": {"deep": [1, 2.50, 12345678901234567890]}, "annotations": {"a": "<b>"}}`
	out, _, err := addHooks([]byte(spec), testHooks())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"x-future":{"deep":[1,2.50,12345678901234567890]}`, `"annotations":{"a":"<b>"}`, `"ociVersion":"1.3.0"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}

func TestAddHooksRefusesWhatIsNotASpec(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"", "not json", "[1,2]", "null", `{"hooks":[]}`, `{"hooks":{"poststop":{}}}`, `{"a":1`} {
		if _, _, err := addHooks([]byte(spec), testHooks()); !errors.Is(err, ErrNotJSON) {
			t.Errorf("%q: %v, want ErrNotJSON", spec, err)
		}
	}
}

// The file is replaced whole, with its mode; a file that is not JSON is left as it was.
func TestAddHooksFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, []byte(`{"ociVersion":"1.0.2"}`), 0o640); err != nil {
		t.Fatal(err)
	}
	added, err := AddHooks(path, testHooks())
	if err != nil || len(added) != 2 {
		t.Fatalf("added %v, %v", added, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after: %v, %v; want 0640", fi.Mode(), err)
	}
	es, _ := os.ReadDir(dir)
	if len(es) != 1 {
		t.Errorf("temporary files left: %v", es)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{oops"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := AddHooks(bad, testHooks()); !errors.Is(err, ErrNotJSON) {
		t.Errorf("not JSON: %v", err)
	}
	if b, _ := os.ReadFile(bad); string(b) != "{oops" {
		t.Errorf("a file that is not JSON was changed: %q", b)
	}
}

func TestSpecPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    Command
		want string
	}{
		{Command{}, "config.json"},
		{Command{Bundle: "/b"}, "/b/config.json"},
		{Command{Bundle: "/b", ConfigFile: "o.json"}, "/b/o.json"},
		{Command{Bundle: "/b", ConfigFile: "/abs.json"}, "/abs.json"},
	} {
		if got := SpecPath(tc.c); got != tc.want {
			t.Errorf("SpecPath(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}

// FuzzAddHooks: whatever the spec, the result is JSON holding both hooks exactly once, and
// a second call adds nothing; what is refused is refused as not JSON.
func FuzzAddHooks(f *testing.F) {
	for _, s := range []string{`{}`, `{"hooks":{}}`, `{"hooks":{"poststop":[{"path":"/x/resctrl-mon-hook","args":["poststop"]}]}}`,
		`{"a":[1,{"b":null}],"hooks":{"prestart":[1]}}`, `[]`, `{"hooks":{"createRuntime":[{"path":1}]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		out, added, err := addHooks([]byte(spec), testHooks())
		if err != nil {
			if !errors.Is(err, ErrNotJSON) {
				t.Fatalf("%q: %v does not wrap ErrNotJSON", spec, err)
			}
			return
		}
		if len(added) == 0 {
			return
		}
		var s struct {
			Hooks map[string][]json.RawMessage `json:"hooks"`
		}
		if err := json.Unmarshal(out, &s); err != nil {
			t.Fatalf("%q → %s: not a spec: %v", spec, out, err)
		}
		for _, stage := range []string{"createRuntime", "poststop"} {
			ours := testHooks()[stage].Path
			asPrestart := stage == "createRuntime" && hasOurs(s.Hooks["prestart"], stage, ours)
			if !hasOurs(s.Hooks[stage], stage, ours) && !asPrestart {
				t.Errorf("%q → %s: no hook at %s", spec, out, stage)
			}
		}
		if _, again, err := addHooks(out, testHooks()); err != nil || len(again) != 0 {
			t.Errorf("%q: second call added %v (%v)", spec, again, err)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
