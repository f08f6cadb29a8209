package main

import (
	"slices"
	"strings"
	"testing"
)

func TestParseModules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []string // module.String() of each, in order
		wantErr string
	}{
		{
			name: "std packages, duplicates and order",
			in: "\n" +
				"golang.org/x/sys\tv0.50.0\t/mod/golang.org/x/sys@v0.50.0\tfalse\t\t\n" +
				"\n" +
				"github.com/a/b\tv1.0.0\t/mod/github.com/a/b@v1.0.0\tfalse\t\t\n" +
				"golang.org/x/sys\tv0.50.0\t/mod/golang.org/x/sys@v0.50.0\tfalse\t\t\n" +
				"example.com/me\t\t/src/me\ttrue\t\t\n",
			want: []string{"example.com/me", "github.com/a/b v1.0.0", "golang.org/x/sys v0.50.0"},
		},
		{
			name: "replaced",
			in:   "github.com/a/b\tv1.0.0\t/src/fork\tfalse\t../fork\t\n",
			want: []string{"github.com/a/b v1.0.0 => ../fork"},
		},
		{
			name: "replaced by a version",
			in:   "github.com/a/b\tv1.0.0\t/mod/x@v1.1.0\tfalse\tgithub.com/x/b\tv1.1.0\n",
			want: []string{"github.com/a/b v1.0.0 => github.com/x/b v1.1.0"},
		},
		{name: "nothing", in: "", want: []string{}},
		{name: "too few fields", in: "github.com/a/b\tv1.0.0\n", wantErr: "want 6 tab-separated fields, got 2"},
		{name: "main not a bool", in: "github.com/a/b\tv1\t/d\tyes\t\t\n", wantErr: `main "yes"`},
		{name: "escaping path", in: "../etc\tv1\t/d\tfalse\t\t\n", wantErr: `module path "../etc"`},
		{name: "absolute path", in: "/etc\tv1\t/d\tfalse\t\t\n", wantErr: `module path "/etc"`},
		{name: "unclean path", in: "a.com//b\tv1\t/d\tfalse\t\t\n", wantErr: `module path "a.com//b"`},
		{name: "std is ours", in: "std\tv1\t/d\tfalse\t\t\n", wantErr: `module path "std"`},
		{name: "not downloaded", in: "a.com/b\tv1\t\tfalse\t\t\n", wantErr: "module a.com/b: no directory"},
		{name: "no version", in: "a.com/b\t\t/d\tfalse\t\t\n", wantErr: "module a.com/b: no version"},
		{
			name:    "two versions",
			in:      "a.com/b\tv1\t/d1\tfalse\t\t\na.com/b\tv2\t/d2\tfalse\t\t\n",
			wantErr: "module a.com/b listed twice",
		},
		{
			name:    "two main modules",
			in:      "a.com/b\t\t/d1\ttrue\t\t\na.com/c\t\t/d2\ttrue\t\t\n",
			wantErr: "more than one main module",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mods, err := parseModules(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, m := range mods {
				got = append(got, m.String())
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzParseModules: whatever go list printed, parsing never panics, and every module it
// accepts names a directory inside the tree.
func FuzzParseModules(f *testing.F) {
	f.Add("github.com/a/b\tv1.0.0\t/mod/a\tfalse\t\t\n\nexample.com/me\t\t/src\ttrue\t\t\n")
	f.Add("../x\tv1\t/d\tfalse\t\t\n")
	f.Add("a\tv1\t/d\tfalse\tb\tv2\n")
	f.Fuzz(func(t *testing.T, in string) {
		mods, err := parseModules(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, m := range mods {
			if err := checkModule(m); err != nil {
				t.Fatalf("accepted %q: %v", m, err)
			}
			if strings.HasPrefix(m.Path, "/") || slices.Contains(strings.Split(m.Path, "/"), "..") {
				t.Fatalf("accepted a path outside the tree: %q", m.Path)
			}
		}
	})
}
