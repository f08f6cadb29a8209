package hostinstall

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const wrapperAt = "/usr/local/bin/resctrl-mon-runtime"

func TestFindPaths(t *testing.T) {
	t.Parallel()
	paths := []string{wrapperAt, DefaultConfigPath}
	for _, tc := range []struct {
		name, text string
		want       []Reference
	}{
		{"containerd 2.x handler", "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.rm.options]\n  BinaryName = \"/usr/local/bin/resctrl-mon-runtime\"\n",
			[]Reference{{Line: 3, Path: wrapperAt}}},
		{"CRI-O handler with the config in its env", "[crio.runtime.runtimes.rm]\nruntime_path = '/usr/local/bin/resctrl-mon-runtime'\nmonitor_env = [\"RESCTRL_MON_CONFIG=/etc/resctrl-mon/config.yaml\"]\n",
			[]Reference{{Line: 2, Path: wrapperAt}, {Line: 3, Path: DefaultConfigPath}}},
		{"inline table", `runtimes = { rm = { options = { BinaryName="/usr/local/bin/resctrl-mon-runtime" } } }`, []Reference{{Line: 1, Path: wrapperAt}}},
		{"the path at the end of the text", wrapperAt, []Reference{{Line: 1, Path: wrapperAt}}},
		{"a comment line", "  # BinaryName = \"/usr/local/bin/resctrl-mon-runtime\"\n", nil},
		{"a longer name", `BinaryName = "/usr/local/bin/resctrl-mon-runtime.old"`, nil},
		{"another directory", `BinaryName = "/opt/usr/local/bin/resctrl-mon-runtime"`, nil},
		{"a prefix only", `BinaryName = "/usr/local/bin/resctrl-mon"`, nil},
		{"the longer name first, then the path", `a = "/usr/local/bin/resctrl-mon-runtime2", b = "/usr/local/bin/resctrl-mon-runtime"`, []Reference{{Line: 1, Path: wrapperAt}}},
		{"runc", "BinaryName = \"/usr/bin/runc\"\r\n", nil},
		{"empty", "", nil},
	} {
		if got := findPaths([]byte(tc.text), paths); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func FuzzFindPaths(f *testing.F) {
	f.Add([]byte("BinaryName = \"/usr/local/bin/resctrl-mon-runtime\"\n# x"), wrapperAt)
	f.Add([]byte("a/b/c"), "/b")
	f.Fuzz(func(t *testing.T, text []byte, path string) {
		refs := findPaths(text, []string{path})
		lines := strings.Split(string(text), "\n")
		for _, r := range refs {
			if r.Line < 1 || r.Line > len(lines) || r.Path != path || !strings.Contains(lines[r.Line-1], path) {
				t.Fatalf("%+v: not a line naming %q", r, path)
			}
		}
		// Whatever precedes a mention on a line of its own, the path alone is named.
		if path != "" && !strings.ContainsAny(path, "\n") && !strings.HasPrefix(strings.TrimLeft(path, " \t"), "#") {
			if len(findPaths([]byte(path), []string{path})) != 1 {
				t.Fatalf("%q alone is not found", path)
			}
		}
	})
}

// wrapperFixture is a host with the wrapper installed (mode nri: no hooks.d JSON).
func wrapperFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	write(t, filepath.Join(f.src, "resctrl-mon-runtime"), "\x7fELF a wrapper")
	f.opts.WrapperPath, f.opts.WrapperSource, f.opts.NoRegistrations = wrapperAt, filepath.Join(f.src, "resctrl-mon-runtime"), true
	f.install()
	f.opts.RuntimeConfigs = DefaultRuntimeConfigs
	return f
}

// While a runtime's config (a file, or a drop-in in a directory) names the wrapper, uninstall
// removes nothing and says which file and line; once the handler is gone it removes all.
func TestUninstallRefusedWhileNamed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, file, text string }{
		{"containerd", "/etc/containerd/config.toml", "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.rm.options]\nBinaryName = \"" + wrapperAt + "\"\n"},
		{"a CRI-O drop-in", "/etc/crio/crio.conf.d/10-rm.conf", "[crio.runtime.runtimes.rm]\nruntime_path = \"" + wrapperAt + "\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := wrapperFixture(t)
			write(t, filepath.Join(f.root, "/etc/containerd/config.toml"), "version = 3\n")
			write(t, filepath.Join(f.root, tc.file), tc.text)
			before := f.files()
			res, err := Uninstall(f.opts)
			var inUse *InUseError
			if !errors.Is(err, ErrNamedByRuntime) || !errors.As(err, &inUse) || len(res.Removed) != 0 {
				t.Fatalf("uninstall: removed %q, %v; want nothing removed and ErrNamedByRuntime", res.Removed, err)
			}
			if len(inUse.Refs) != 1 || inUse.Refs[0].File != tc.file || inUse.Refs[0].Path != wrapperAt ||
				!strings.Contains(err.Error(), tc.file) || !strings.Contains(err.Error(), "restart the runtime") {
				t.Errorf("refusal: %v", err)
			}
			if got := f.files(); !slices.Equal(got, before) {
				t.Errorf("files after a refusal %q, want %q", got, before)
			}
			// The operator takes the handler out: now everything goes.
			write(t, filepath.Join(f.root, tc.file), "# the handler was here\n")
			if _, err := Uninstall(f.opts); err != nil {
				t.Fatal(err)
			}
			if got := f.files(); slices.Contains(got, wrapperAt) || slices.Contains(got, DefaultHookPath) {
				t.Errorf("after the handler went: %q", got)
			}
		})
	}
}

// A config that cannot be read is an unknown answer: nothing is removed. Configs that are not
// there (a runtime the node does not run) and what is not a regular file in a drop-in
// directory are no answer at all.
func TestUninstallRuntimeConfigUnreadable(t *testing.T) {
	t.Parallel()
	f := wrapperFixture(t)
	if err := os.MkdirAll(filepath.Join(f.root, "/etc/crio/crio.conf.d/subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Too large to read whole: whether it names the wrapper is not known.
	write(t, filepath.Join(f.root, "/etc/containerd/config.toml"), strings.Repeat("#\n", maxRuntimeConfig/2+1))
	before := f.files()
	if res, err := Uninstall(f.opts); err == nil || errors.Is(err, ErrNamedByRuntime) || !strings.Contains(err.Error(), "config.toml") || len(res.Removed) != 0 {
		t.Errorf("unreadable config: removed %q, %v", res.Removed, err)
	}
	if got := f.files(); !slices.Equal(got, before) {
		t.Errorf("files %q, want %q", got, before)
	}
	if err := os.Remove(filepath.Join(f.root, "/etc/containerd/config.toml")); err != nil {
		t.Fatal(err)
	}
	if _, err := Uninstall(f.opts); err != nil {
		t.Errorf("no containerd config, an empty drop-in dir: %v", err)
	}
	bad := f.opts
	bad.RuntimeConfigs = []string{"etc/crio"}
	if _, err := Uninstall(bad); err == nil || !strings.Contains(err.Error(), "--runtime-config") {
		t.Errorf("a relative runtime config: %v", err)
	}
}
