package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/lib/psimetrics"
)

const root = "../.."

// The generated pages in the tree are what the code makes now: a config key, metric, flag or
// action added without `make docs` fails here, naming the page.
func TestPagesAreCurrent(t *testing.T) {
	t.Parallel()
	pages, err := Pages(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		have, err := os.ReadFile(filepath.Join(root, p.Path))
		if err != nil {
			t.Errorf("%s: %v (run `make docs`)", p.Path, err)
			continue
		}
		if !bytes.Equal(have, p.Data) {
			t.Errorf("%s is not what the code makes now: run `make docs` and commit it\n%s", p.Path, firstDiff(have, p.Data))
		}
	}
}

// Every family the collectors describe is on the metrics page: one the sample node does not
// bring out in a scrape would otherwise be left off without a word.
func TestMetricsPageHasEveryDescribedFamily(t *testing.T) {
	t.Parallel()
	c, err := exporter.New(sampleNode{}, exporter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := psimetrics.New(psimetrics.Options{Labels: exporter.PressureLabels(), Averages: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := metricsData()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range data.([]family) {
		names = append(names, strings.Trim(f.Name, "`"))
	}
	described := slices.Concat(Described(c), Described(p))
	if len(described) < 20 {
		t.Fatalf("only %d families described: %q", len(described), described)
	}
	for _, d := range described {
		if !slices.Contains(names, d) {
			t.Errorf("%s is described by a collector but not on the metrics page", d)
		}
	}
}

func TestSubcommands(t *testing.T) {
	t.Parallel()
	help := "NAME:\n   x\n\nCOMMANDS:\n   reconcile  make\n   top        a view\n   help, h    Shows\n\nGLOBAL OPTIONS:\n   --config value\n"
	if got := subcommands(help); !slices.Equal(got, []string{"reconcile", "top"}) {
		t.Errorf("subcommands = %q", got)
	}
	if got := subcommands("usage: x [flags]\n  -config string\n"); got != nil {
		t.Errorf("no COMMANDS heading: %q", got)
	}
}

// firstDiff shows the first line where two texts part.
func firstDiff(have, want []byte) string {
	h, w := strings.Split(string(have), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(h), len(w)) {
		var a, b string
		if i < len(h) {
			a = h[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n  in the tree: " + a + "\n  generated:   " + b
		}
	}
	return ""
}
