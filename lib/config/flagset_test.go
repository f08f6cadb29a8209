package config

import (
	"flag"
	"io"
	"maps"
	"testing"
)

// The flags of every key and --config are bound, the keys given are returned by key, and
// the help texts are written only when asked.
func TestBindFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		args      []string
		wantPath  string
		wantGiven map[string]string
	}{
		{"none", nil, "", map[string]string{}},
		{"config only", []string{"--config", "/etc/x.yaml"}, "/etc/x.yaml", map[string]string{}},
		{"keys", []string{"--retention", "1m", "--failurePolicy=closed"}, "", map[string]string{"retention": "1m", "failurePolicy": "closed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			flags := BindFlags(fs)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			if flags.Path() != c.wantPath || !maps.Equal(flags.Given(), c.wantGiven) {
				t.Errorf("path %q, given %v; want %q, %v", flags.Path(), flags.Given(), c.wantPath, c.wantGiven)
			}
		})
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	flags := BindFlags(fs)
	for _, k := range append(Keys(), "config") {
		if f := fs.Lookup(k); f == nil || f.Usage != "" {
			t.Fatalf("flag %s: %v, want bound with no help text yet", k, f)
		}
	}
	flags.FillUsage()
	if got, want := fs.Lookup("retention").Usage, FlagUsage("retention"); got != want {
		t.Errorf("retention's help %q, want %q", got, want)
	}
	if got, want := fs.Lookup("config").Usage, ConfigFlagUsage(); got != want {
		t.Errorf("config's help %q, want %q", got, want)
	}
}
