package hostinstall

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/hooksd"
)

const fakeHook = "\x7fELF a hook"

// fixture is a host root in a temp dir, a hook binary and a config to install from it.
type fixture struct {
	t            *testing.T
	root, src    string
	opts         Options
	createJSON   string
	poststopJSON string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, root: t.TempDir(), src: t.TempDir()}
	write(t, filepath.Join(f.src, "resctrl-mon-hook"), fakeHook)
	write(t, filepath.Join(f.src, "config.yaml"), "retention: 1m\n")
	f.opts = Options{
		HostRoot:     f.root,
		HookSource:   filepath.Join(f.src, "resctrl-mon-hook"),
		HookPath:     DefaultHookPath,
		HooksDir:     DefaultHooksDir,
		ConfigSource: filepath.Join(f.src, "config.yaml"),
		ConfigPath:   DefaultConfigPath,
		Timeout:      DefaultTimeout,
	}
	// The node's runtime, which the wrapper runs (TestInstallWrapperRuntime); not one of
	// the files an install writes (files).
	write(t, filepath.Join(f.root, "usr/sbin/runc"), "\x7fELF runc")
	if err := os.Chmod(filepath.Join(f.root, "usr/sbin/runc"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.createJSON = filepath.Join(DefaultHooksDir, "resctrl-mon-createruntime.json")
	f.poststopJSON = filepath.Join(DefaultHooksDir, "resctrl-mon-poststop.json")
	return f
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// files lists every file under the host root as host paths, sorted, but the node's runtimes.
func (f *fixture) files() []string {
	f.t.Helper()
	var out []string
	err := filepath.WalkDir(f.root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !slices.Contains(runtimeCandidates, strings.TrimPrefix(p, f.root)) {
			out = append(out, strings.TrimPrefix(p, f.root))
		}
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func (f *fixture) read(hostPath string) string {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.root, hostPath))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

func (f *fixture) install() Result {
	f.t.Helper()
	res, err := Install(f.opts)
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

var installedFiles = []string{
	"/etc/resctrl-mon/config.yaml",
	"/etc/resctrl-mon/host-install.json",
	"/usr/local/libexec/oci/hooks.d/resctrl-mon-hook",
	"/usr/share/containers/oci/hooks.d/resctrl-mon-createruntime.json",
	"/usr/share/containers/oci/hooks.d/resctrl-mon-poststop.json",
}

// TestInstall: the files land under the host root, and every path they name is the host's.
func TestInstall(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.install()
	if got := f.files(); !slices.Equal(got, installedFiles) {
		t.Fatalf("installed %q, want %q", got, installedFiles)
	}
	// The order a runtime needs: the binary before the JSON that names it.
	want := []string{DefaultHookPath, DefaultConfigPath, f.createJSON, f.poststopJSON}
	if !slices.Equal(res.Written, want) {
		t.Errorf("written in order %q, want %q", res.Written, want)
	}
	if fi, err := os.Stat(filepath.Join(f.root, DefaultHookPath)); err != nil || fi.Mode().Perm() != 0o755 || f.read(DefaultHookPath) != fakeHook {
		t.Errorf("the hook: %v %v", fi.Mode(), err)
	}
	if f.read(DefaultConfigPath) != "retention: 1m\n" {
		t.Errorf("the config: %q", f.read(DefaultConfigPath))
	}
	for _, p := range []string{f.createJSON, f.poststopJSON} {
		var r hooksd.Registration
		if err := json.Unmarshal([]byte(f.read(p)), &r); err != nil {
			t.Fatal(err)
		}
		if r.Hook.Path != DefaultHookPath || *r.Hook.Timeout != 10 || slices.Contains(r.Hook.Args, "--config") ||
			!slices.Contains(r.Hook.Args, "8s") || strings.Contains(f.read(p), f.root) {
			t.Errorf("%s: %s", p, f.read(p))
		}
	}
	var m manifest
	if err := json.Unmarshal([]byte(f.read("/etc/resctrl-mon/host-install.json")), &m); err != nil {
		t.Fatal(err)
	}
	if slices.Sort(m.Files); !slices.Equal(m.Files, slices.DeleteFunc(slices.Clone(installedFiles), func(p string) bool { return strings.HasSuffix(p, ManifestName) })) {
		t.Errorf("manifest %q", m.Files)
	}
}

// TestInstallConfigElsewhere: a config where the hook's build does not look is passed to it.
func TestInstallConfigElsewhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.opts.ConfigPath = "/etc/rm/hook.yaml"
	f.opts.HookPath = "/opt/rm/hook"
	f.opts.HooksDir = "/etc/containers/oci/hooks.d"
	f.opts.Timeout = 5
	f.install()
	var r hooksd.Registration
	if err := json.Unmarshal([]byte(f.read("/etc/containers/oci/hooks.d/resctrl-mon-createruntime.json")), &r); err != nil {
		t.Fatal(err)
	}
	want := []string{"resctrl-mon-hook", "--hookBudget", "3s", "--config", "/etc/rm/hook.yaml", "createRuntime"}
	if r.Hook.Path != "/opt/rm/hook" || !slices.Equal(r.Hook.Args, want) || *r.Hook.Timeout != 5 {
		t.Errorf("registration %+v, want args %q", r.Hook, want)
	}
	if _, err := os.Stat(filepath.Join(f.root, "/etc/rm/host-install.json")); err != nil {
		t.Errorf("the manifest is not beside the config: %v", err)
	}
	if config.DefaultPath == f.opts.ConfigPath {
		t.Fatal("the test needs a config path the build does not default to")
	}
}

// TestInstallTwice: a second install is the first one again, leaving no temp file; a
// changed source replaces what is there.
func TestInstallTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.install()
	before := map[string]string{}
	for _, p := range installedFiles {
		before[p] = f.read(p)
	}
	f.install()
	if got := f.files(); !slices.Equal(got, installedFiles) {
		t.Fatalf("after a second install: %q", got)
	}
	for _, p := range installedFiles {
		if f.read(p) != before[p] {
			t.Errorf("%s changed: %q, was %q", p, f.read(p), before[p])
		}
	}
	write(t, f.opts.HookSource, fakeHook+" v2")
	write(t, f.opts.ConfigSource, "retention: 2m\n")
	f.install()
	if f.read(DefaultHookPath) != fakeHook+" v2" || f.read(DefaultConfigPath) != "retention: 2m\n" {
		t.Errorf("an upgrade did not replace the hook and config")
	}
}

// TestInstallMoved: installed again with another hooks dir and hook path, the old ones go.
func TestInstallMoved(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.install()
	f.opts.HooksDir = "/etc/containers/oci/hooks.d"
	f.opts.HookPath = "/opt/bin/resctrl-mon-hook"
	res := f.install()
	want := []string{
		"/etc/containers/oci/hooks.d/resctrl-mon-createruntime.json",
		"/etc/containers/oci/hooks.d/resctrl-mon-poststop.json",
		"/etc/resctrl-mon/config.yaml",
		"/etc/resctrl-mon/host-install.json",
		"/opt/bin/resctrl-mon-hook",
	}
	if got := f.files(); !slices.Equal(got, want) {
		t.Errorf("after moving: %q, want %q", got, want)
	}
	// The old JSON before the old binary.
	if wantRemoved := []string{f.createJSON, f.poststopJSON, DefaultHookPath}; !slices.Equal(res.Removed, wantRemoved) {
		t.Errorf("removed %q, want %q", res.Removed, wantRemoved)
	}
}

// TestUninstall removes exactly what install wrote, JSON first, and leaves an admin's files
// (beside ours, and at the config path when install was not given a config).
func TestUninstall(t *testing.T) {
	t.Parallel()
	for _, withConfig := range []bool{true, false} {
		f := newFixture(t)
		foreign := []string{"/usr/share/containers/oci/hooks.d/other.json", "/etc/resctrl-mon/web.yml",
			"/usr/local/libexec/oci/hooks.d/other-hook"}
		if !withConfig {
			f.opts.ConfigSource = ""
			foreign = append(foreign, DefaultConfigPath)
		}
		for _, p := range foreign {
			write(t, filepath.Join(f.root, p), "the admin's")
		}
		f.install()
		res, err := Uninstall(f.opts)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(foreign)
		if got := f.files(); !slices.Equal(got, foreign) {
			t.Errorf("config %v: after uninstall %q, want the admin's %q", withConfig, got, foreign)
		}
		for _, p := range foreign {
			if f.read(p) != "the admin's" {
				t.Errorf("%s was changed", p)
			}
		}
		if len(res.Removed) < 4 || !strings.HasSuffix(res.Removed[0], ".json") || !strings.HasSuffix(res.Removed[1], ".json") ||
			res.Removed[len(res.Removed)-1] != "/etc/resctrl-mon/host-install.json" {
			t.Errorf("removed in order %q: want the JSON first, the manifest last", res.Removed)
		}
		// Again: nothing recorded, nothing removed.
		if res, err := Uninstall(f.opts); err != nil || len(res.Removed) != 0 {
			t.Errorf("a second uninstall: %v %q", err, res.Removed)
		}
	}
}

// TestInstallForeign: a file at a destination that no manifest claims is refused, naming
// it, and nothing is written; --adopt takes it over.
func TestInstallForeign(t *testing.T) {
	t.Parallel()
	for _, p := range []string{DefaultHookPath, DefaultConfigPath, DefaultHooksDir + "/resctrl-mon-poststop.json"} {
		f := newFixture(t)
		write(t, filepath.Join(f.root, p), "the admin's")
		_, err := Install(f.opts)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "--adopt") {
			t.Errorf("%s there: %v, want a refusal naming it", p, err)
		}
		if got := f.files(); !slices.Equal(got, []string{p}) || f.read(p) != "the admin's" {
			t.Errorf("%s there: install wrote %q anyway", p, got)
		}
		f.opts.Adopt = true
		f.install()
		if got := f.files(); !slices.Equal(got, installedFiles) {
			t.Errorf("--adopt: %q", got)
		}
	}
}

// TestInstallRefused: each bad option is refused naming its flag, before anything is written.
func TestInstallRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, want string
		edit       func(f *fixture)
	}{
		{"relative hook path", "--hook-path", func(f *fixture) { f.opts.HookPath = "usr/hook" }},
		{"unclean hooks dir", "--hooks-dir", func(f *fixture) { f.opts.HooksDir = "/usr/share//hooks.d" }},
		{"empty config path", "--config-path", func(f *fixture) { f.opts.ConfigPath = "" }},
		{"relative manifest", "--manifest", func(f *fixture) { f.opts.Manifest = "m.json" }},
		{"hook in hooks dir", "--hook-path", func(f *fixture) { f.opts.HookPath = DefaultHooksDir + "/h" }},
		{"config is the hook", "three different files", func(f *fixture) { f.opts.ConfigPath = DefaultHookPath }},
		{"timeout", "--timeout 2", func(f *fixture) { f.opts.Timeout = 2 }},
		{"missing hook source", "--hook-source", func(f *fixture) { f.opts.HookSource = "/nonexistent/hook" }},
		{"hook source not a binary", "--hook-source", func(f *fixture) { f.opts.HookSource = f.opts.ConfigSource }},
		{"missing config", "--config", func(f *fixture) { f.opts.ConfigSource = "/nonexistent/config.yaml" }},
		{"bad config", "soon", func(f *fixture) { write(t, f.opts.ConfigSource, "retention: soon\n") }},
		{"unknown config key", "retension", func(f *fixture) { write(t, f.opts.ConfigSource, "retension: 1m\n") }},
		{"missing host root", "--host-root", func(f *fixture) { f.opts.HostRoot = filepath.Join(f.root, "nope") }},
		{"empty host root", "--host-root", func(f *fixture) { f.opts.HostRoot = "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			tc.edit(f)
			_, err := Install(f.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want an error naming %q", err, tc.want)
			}
			if f.opts.HostRoot == f.root {
				if got := f.files(); len(got) != 0 {
					t.Errorf("wrote %q anyway", got)
				}
			}
		})
	}
}

// TestUninstallBadManifest: a manifest that is not ours to read is refused, and nothing is
// removed.
func TestUninstallBadManifest(t *testing.T) {
	t.Parallel()
	for _, body := range []string{"{", `{"version":2,"files":[]}`, `{"version":1,"files":["etc/passwd"]}`, `{"version":1,"files":["/etc/../passwd"]}`} {
		f := newFixture(t)
		f.install()
		write(t, filepath.Join(f.root, "/etc/resctrl-mon/host-install.json"), body)
		if _, err := Uninstall(f.opts); err == nil || !strings.Contains(err.Error(), "host-install.json") {
			t.Errorf("manifest %s: %v, want an error naming it", body, err)
		}
		if got := f.files(); !slices.Equal(got, installedFiles) {
			t.Errorf("manifest %s: removed some anyway: %q", body, got)
		}
	}
}

// TestInstallSymlinks: a symlink on the host is followed as the host would, an absolute one
// under the host root, so a write never leads out of it; uninstall removes what the links
// lead to, not the links.
func TestInstallSymlinks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	outside := t.TempDir()
	// On the host, the hooks dir is a link to another host directory named by absolute path;
	// here that path would be outside the host root.
	if err := os.MkdirAll(filepath.Join(f.root, "/usr/share/containers/oci"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.root, DefaultHooksDir)); err != nil {
		t.Fatal(err)
	}
	f.install()
	if es, _ := os.ReadDir(outside); len(es) != 0 {
		t.Errorf("wrote %v outside the host root", es)
	}
	under := filepath.Join(outside, "resctrl-mon-createruntime.json") // the host's path
	if _, err := os.Stat(filepath.Join(f.root, under)); err != nil {
		t.Errorf("the JSON is not where the host's link leads: %v", err)
	}
	if _, err := Uninstall(f.opts); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(f.root, DefaultHooksDir)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("uninstall removed the host's link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.root, under)); !os.IsNotExist(err) {
		t.Errorf("uninstall left the JSON: %v", err)
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"version":1,"files":["/usr/local/libexec/oci/hooks.d/resctrl-mon-hook"]}`))
	f.Add([]byte(`{"version":1,"files":["relative"]}`))
	f.Add([]byte(`{"version":1,"files":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseManifest(b)
		if err != nil {
			return
		}
		for _, p := range m.Files {
			if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
				t.Errorf("accepted %q", p)
			}
		}
	})
}

// TestInstallWrapper: the wrapper goes in after the hook it names, and comes out before it;
// with NoRegistrations (an NRI node) no hooks.d JSON is written.
func TestInstallWrapper(t *testing.T) {
	t.Parallel()
	const wrapperPath = "/usr/local/bin/resctrl-mon-runtime"
	f := newFixture(t)
	write(t, filepath.Join(f.src, "resctrl-mon-runtime"), "\x7fELF a wrapper")
	f.opts.WrapperPath, f.opts.WrapperSource, f.opts.NoRegistrations = wrapperPath, filepath.Join(f.src, "resctrl-mon-runtime"), true
	res := f.install()
	if want := []string{DefaultHookPath, wrapperPath, DefaultConfigPath}; !slices.Equal(res.Written, want) {
		t.Errorf("written in order %q, want %q", res.Written, want)
	}
	if got := f.files(); slices.Contains(got, f.createJSON) || !slices.Contains(got, wrapperPath) {
		t.Errorf("installed %q: want the wrapper and no hooks.d JSON", got)
	}
	res, err := Uninstall(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{DefaultConfigPath, wrapperPath, DefaultHookPath, "/etc/resctrl-mon/host-install.json"}; !slices.Equal(res.Removed, want) {
		t.Errorf("removed in order %q, want %q", res.Removed, want)
	}
	if got := f.files(); len(got) != 0 {
		t.Errorf("left %q", got)
	}
	// A wrapper path that is another file's, or a source that is no executable, is refused.
	f.opts.WrapperPath = DefaultHookPath
	if _, err := Install(f.opts); err == nil || !strings.Contains(err.Error(), "--wrapper-path") {
		t.Errorf("wrapper at the hook's path: %v", err)
	}
	f.opts.WrapperPath = wrapperPath
	write(t, f.opts.WrapperSource, "#!/bin/sh")
	if _, err := Install(f.opts); err == nil || !strings.Contains(err.Error(), "--wrapper-source") {
		t.Errorf("a script as the wrapper: %v", err)
	}
}

// The wrapper runs the runtime its config names: an install on a node where that is not an
// executable file fails, naming the runtimes the node has (RHEL's /usr/bin/runc, crun) and
// the key to set, instead of every container of the handler failing later. A link to the
// runtime counts, resolved within the host (RHEL's /usr/sbin is no link, Debian's may be).
func TestInstallWrapperRuntime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		config string
		host   map[string]string // host path: an executable's content, or "->target" for a link
		want   string            // "" installs
	}{
		{"the default, there", "", map[string]string{"/usr/sbin/runc": "x"}, ""},
		{"RHEL: runc in /usr/bin", "", map[string]string{"/usr/bin/runc": "x"}, "--set config.runtime=/usr/bin/runc"},
		{"crun only", "", map[string]string{"/usr/bin/crun": "x"}, "it has /usr/bin/crun"},
		{"nothing", "", nil, "nor is any of /usr/sbin/runc"},
		{"set to RHEL's", "runtime: /usr/bin/runc\n", map[string]string{"/usr/bin/runc": "x"}, ""},
		{"a link within the host", "runtime: /usr/local/bin/runc\n", map[string]string{"/usr/bin/runc": "x", "/usr/local/bin/runc": "->/usr/bin/runc"}, ""},
		{"a link leading nowhere", "", map[string]string{"/usr/sbin/runc": "->/opt/gone/runc"}, "not an executable file"},
		{"not executable", "", map[string]string{"/usr/sbin/runc": "-"}, "not an executable file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			write(t, filepath.Join(f.src, "resctrl-mon-runtime"), "\x7fELF a wrapper")
			write(t, filepath.Join(f.src, "config.yaml"), "retention: 1m\n"+tc.config)
			f.opts.WrapperPath, f.opts.WrapperSource, f.opts.NoRegistrations = "/usr/local/bin/resctrl-mon-runtime", filepath.Join(f.src, "resctrl-mon-runtime"), true
			if err := os.Remove(filepath.Join(f.root, "usr/sbin/runc")); err != nil {
				t.Fatal(err)
			}
			for p, what := range tc.host {
				at := filepath.Join(f.root, p)
				if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
					t.Fatal(err)
				}
				var err error
				switch {
				case strings.HasPrefix(what, "->"):
					err = os.Symlink(strings.TrimPrefix(what, "->"), at)
				case what == "-":
					err = os.WriteFile(at, []byte("x"), 0o644)
				default:
					err = os.WriteFile(at, []byte(what), 0o755)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			_, err := Install(f.opts)
			if tc.want == "" && err != nil {
				t.Fatalf("install: %v", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "config key runtime")) {
				t.Fatalf("install: %v; want an error naming config key runtime and %q", err, tc.want)
			}
			if tc.want != "" {
				if got := f.files(); len(got) != 0 {
					t.Errorf("a refused install wrote %q", got)
				}
			}
		})
	}
}
