package k8s

import (
	"strings"
	"testing"
)

// The check containerNames makes on a scrape, tried on what each runtime would give and on
// what the exporter gave before names were recorded.
func TestCheckContainerNames(t *testing.T) {
	t.Parallel()
	idA, idB := strings.Repeat("a", 64), strings.Repeat("b", 64)
	ids := map[string]string{"a": idA, "b": idB}
	for _, c := range []struct {
		about  string
		series []labelSet
		ok     bool
	}{
		{"by name", []labelSet{{"", ""}, {"a", idA}, {"b", idB}}, true},
		{"by id, as before", []labelSet{{"", ""}, {idA, idA}, {idB, idB}}, false},
		{"one by id", []labelSet{{"", ""}, {"a", idA}, {idB, idB}}, false},
		{"no pod series", []labelSet{{"a", idA}, {"b", idB}}, false},
		{"an id that is not kubelet's", []labelSet{{"", ""}, {"a", idB}, {"b", idB}}, false},
		{"a container twice", []labelSet{{"", ""}, {"a", idA}, {"a", idA}, {"b", idB}}, false},
		{"none", nil, false},
	} {
		if why := checkContainerNames(c.series, ids, []string{"a", "b"}); (why == "") != c.ok {
			t.Errorf("%s: %q, want ok=%v", c.about, why, c.ok)
		}
	}
	if why := checkContainerNames([]labelSet{{"", ""}, {"a", "c1"}}, map[string]string{"a": "c1"}, []string{"a"}); why == "" {
		t.Errorf("an id that is not 64 hex digits passed")
	}
}
