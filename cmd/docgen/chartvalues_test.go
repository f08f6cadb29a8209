package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseChartValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     []valueRow
		err      string
	}{
		{"leaves and a walked map", `# a header for whoever edits
mode: nri  # not a description

image:
  # -- The image.
  repository: r
  # a note
  # -- Its tag; empty:
  # the appVersion.
  tag: ""
`, nil, "mode (line 2) has no"},
		{"rows", `# -- The mode.
mode: nri
image:
  # -- Its tag | pipe.
  tag: ""
# -- Labels.
labels: {a: "1"}
# -- A list.
tol:
  - operator: Exists
# -- A number.
port: 9432
# -- A switch.
on: true
`, []valueRow{
			{"`mode`", "string", "`\"nri\"`", "The mode."},
			{"`image.tag`", "string", "`\"\"`", `Its tag \| pipe.`},
			{"`labels`", "object", "`{\"a\":\"1\"}`", "Labels."},
			{"`tol`", "list", "`[{\"operator\":\"Exists\"}]`", "A list."},
			{"`port`", "int", "`9432`", "A number."},
			{"`on`", "bool", "`true`", "A switch."},
		}, ""},
		{"continued lines", `x:
  # -- One,
  # two
  # three.
  y: 1
`, []valueRow{{"`x.y`", "int", "`1`", "One, two three."}}, ""},
		{"a continued line that starts with --", `# -- Keep it below ` + "`helm uninstall`" + `
# --timeout (5m).
t: 240
`, []valueRow{{"`t`", "int", "`240`", "Keep it below `helm uninstall` --timeout (5m)."}}, ""},
		{"an empty map needs a description", "m: {}\n", nil, "m (line 1) has no"},
		{"not a map", "- a\n", nil, "not a YAML map"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseChartValues([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("rows\n %q\nwant\n %q", got, tc.want)
			}
		})
	}
}

// The chart's values file is read by this parser only; it must not panic on any input.
func FuzzParseChartValues(f *testing.F) {
	f.Add([]byte("# -- d\na: 1\n"))
	f.Add([]byte("a:\n  # -- d\n  b: [1, 2]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := parseChartValues(b)
		if err == nil {
			for _, r := range rows {
				if r.Key == "" || r.Description == "" {
					t.Fatalf("row without key or description: %+v", r)
				}
			}
		}
	})
}
