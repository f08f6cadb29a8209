package kubeapi

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// apiServer is a TLS test server and a client that trusts it, with the service account files
// a pod has.
func apiServer(t *testing.T, h http.HandlerFunc) *Client {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	sa := t.TempDir()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(sa, "ca.crt"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sa, "token"), []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := InCluster(srv.URL, sa, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every answer the API server can give to the DaemonSet's GET, through real HTTP: only a 404
// or a deletionTimestamp is "gone"; a refusal, a server error or no answer in time keeps
// everything.
func TestDaemonSetAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   Presence
		err    bool
	}{
		{"present", 200, `{"kind":"DaemonSet","metadata":{"name":"ds"}}`, Present, false},
		{"being deleted", 200, `{"kind":"DaemonSet","metadata":{"deletionTimestamp":"2026-12-03T12:00:00Z"}}`, Gone, false},
		{"not found", 404, `{"kind":"Status","code":404}`, Gone, false},
		{"unauthorized", 401, `{"kind":"Status","code":401}`, Present, true},
		{"forbidden", 403, `{"kind":"Status","code":403}`, Present, true},
		{"internal error", 500, `{"kind":"Status","code":500}`, Present, true},
		{"unavailable", 503, ``, Present, true},
		{"gateway timeout", 504, ``, Present, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := apiServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			})
			got, why, err := c.DaemonSet(context.Background(), "ns", "ds")
			if got != tc.want || (err != nil) != tc.err {
				t.Errorf("%s %q %v, want %s (error: %v)", got, why, err, tc.want, tc.err)
			}
		})
	}
}

// No answer before the deadline is no answer: everything is kept. The server holds the
// request until the client gives up (its context here; Timeout in a pod).
func TestDaemonSetNoAnswer(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	c := apiServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if p, _, err := c.DaemonSet(ctx, "ns", "ds"); err == nil || p != Present {
		t.Errorf("no answer: %s, %v; want Present and an error", p, err)
	}
	if c.http.Timeout != Timeout || Timeout.Seconds() != 10 {
		t.Errorf("request timeout %s (Timeout %s), want the documented 10s", c.http.Timeout, Timeout)
	}
}
