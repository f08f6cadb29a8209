package exporter_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/test/resctrltree"
)

// A node's exporter opens resctrl with the mount check its front end gave it: on a fixture
// tree, with the fixtures' check, it is healthy and serves the pods; with none (the kernel's
// resctrl only) /healthz says why the tree is refused and /metrics has no pod.
func TestNodeMount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		mount   bool
		code    int
		health  string // in /healthz's body
		metrics string // in /metrics, or "" for no pod there
	}{
		{"fixtures' check", true, http.StatusOK, "", `resctrl_mon_pod_info{class="",group="mon_groups/` + resctrltree.UIDActive},
		{"resctrlfs.Check", false, http.StatusServiceUnavailable, "not a resctrl mount", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := resctrltree.Config(t, resctrltree.L3)
			o := exporter.NodeOptions{}
			if tc.mount {
				o.Mount = resctrltree.Mount
			} // else serveNode gives the configuration's, resctrlfs.Check: no simulator
			n := serveNode(t, cfg, o, t.Errorf)
			base := "http://" + n.Addr().String()
			code, body := healthz(t, base+"/healthz")
			if code != tc.code || !strings.Contains(body, tc.health) {
				t.Errorf("/healthz: %d %q; want %d with %q", code, body, tc.code, tc.health)
			}
			metrics := get(t, base+"/metrics")
			if tc.metrics != "" && !strings.Contains(metrics, tc.metrics) {
				t.Errorf("/metrics lacks %s", tc.metrics)
			}
			if tc.metrics == "" && strings.Contains(metrics, "resctrl_mon_pod_info{") {
				t.Errorf("/metrics has pods of a refused tree")
			}
		})
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
