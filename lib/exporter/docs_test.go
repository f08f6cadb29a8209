package exporter_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

const metricsPage = "../../docs/reference/metrics.md"

// The metrics reference says what the domain label holds for a mon_data directory, in
// examples ("the `1` of `mon_L3_01`") operators write queries from: each must be the label
// the collector exports for that directory.
func TestMetricsPageDomainExamples(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(metricsPage)
	if err != nil {
		t.Fatal(err)
	}
	// `domain="1"` for `mon_L3_01`, or the `1` of `mon_L3_01`.
	examples := regexp.MustCompile("`(?:domain=\")?([^\"`]*)\"?` (?:for|of) `(mon_[A-Z0-9_]+)`").FindAllStringSubmatch(string(b), -1)
	if len(examples) == 0 {
		t.Fatalf("%s gives no example of the domain label (`domain=\"N\"` for `mon_<resource>_<NN>`)", metricsPage)
	}
	for _, m := range examples {
		if _, id, err := resctrlfs.DomainID(m[2]); err != nil || id != m[1] {
			t.Errorf("%s: domain=%q for %s, but the exporter labels it %q (%v)", metricsPage, m[1], m[2], id, err)
		}
	}
}
