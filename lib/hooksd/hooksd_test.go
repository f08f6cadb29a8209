package hooksd

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		o        Options
		wantArgs []string
	}{
		{"default config", Options{HookPath: "/usr/local/libexec/oci/hooks.d/resctrl-mon-hook", Timeout: 10},
			[]string{"resctrl-mon-hook", "--hookBudget", "8s"}},
		{"config named", Options{HookPath: "/opt/h", ConfigPath: "/etc/rm/c.yaml", Timeout: 3},
			[]string{"resctrl-mon-hook", "--hookBudget", "1s", "--config", "/etc/rm/c.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files, err := Files(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != len(Stages) {
				t.Fatalf("%d files, want one per stage", len(files))
			}
			for _, stage := range Stages {
				var r Registration
				if err := json.Unmarshal(files[FileName(stage)], &r); err != nil {
					t.Fatalf("%s: %v", stage, err)
				}
				want := append(slices.Clone(tc.wantArgs), stage)
				if r.Version != "1.0.0" || r.Hook.Path != tc.o.HookPath || !slices.Equal(r.Hook.Args, want) ||
					r.Hook.Timeout == nil || *r.Hook.Timeout != tc.o.Timeout || !r.When.Always ||
					!slices.Equal(r.Stages, []string{stage}) || len(r.Hook.Env) == 0 {
					t.Errorf("%s: %s, want args %q", stage, files[FileName(stage)], want)
				}
			}
			if b := tc.o.Budget(); b != time.Duration(tc.o.Timeout)*time.Second-2*time.Second {
				t.Errorf("budget %s", b)
			}
		})
	}
	if FileName(CreateRuntime) != "resctrl-mon-createruntime.json" || FileName(Poststop) != "resctrl-mon-poststop.json" {
		t.Errorf("file names %s %s", FileName(CreateRuntime), FileName(Poststop))
	}
}

// TestFilesRefused: every bad option is named in the error, and nothing is generated.
func TestFilesRefused(t *testing.T) {
	t.Parallel()
	good := Options{HookPath: "/usr/libexec/h", Timeout: 10}
	for _, tc := range []struct {
		name, want string
		edit       func(*Options)
	}{
		{"relative hook", "hook path", func(o *Options) { o.HookPath = "libexec/h" }},
		{"empty hook", "hook path is empty", func(o *Options) { o.HookPath = "" }},
		{"unclean hook", "clean", func(o *Options) { o.HookPath = "/usr/../h" }},
		{"root hook", "not the root", func(o *Options) { o.HookPath = "/" }},
		{"newline hook", "control character", func(o *Options) { o.HookPath = "/usr/h\n" }},
		{"relative config", "config path", func(o *Options) { o.ConfigPath = "c.yaml" }},
		{"timeout too small", "timeout 2", func(o *Options) { o.Timeout = 2 }},
		{"timeout zero", "timeout 0", func(o *Options) { o.Timeout = 0 }},
		{"timeout too large", "timeout 3601", func(o *Options) { o.Timeout = 3601 }},
	} {
		o := good
		tc.edit(&o)
		files, err := Files(o)
		if err == nil || !strings.Contains(err.Error(), tc.want) || files != nil {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
}

func TestParseTimeout(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{"10": 10, "3": 3, "3600": 3600} {
		if n, err := ParseTimeout(s); err != nil || n != want {
			t.Errorf("ParseTimeout(%q) = %d, %v", s, n, err)
		}
	}
	// A leading zero (octal to some parsers, not a JSON number), a sign, a unit, a fraction.
	for _, s := range []string{"", "010", "+10", "-1", "10s", "1.5", "ten", " 10"} {
		if _, err := ParseTimeout(s); err == nil || !strings.Contains(err.Error(), "timeout") {
			t.Errorf("ParseTimeout(%q): %v, want an error naming the timeout", s, err)
		}
	}
}
