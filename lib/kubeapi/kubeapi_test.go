package kubeapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPresence(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   Presence
		err    bool
	}{
		{"there", 200, `{"kind":"DaemonSet","metadata":{"name":"x"}}`, Present, false},
		{"being deleted", 200, `{"kind":"DaemonSet","metadata":{"deletionTimestamp":"2026-12-03T12:00:00Z"}}`, Gone, false},
		{"deleted", 404, `{"kind":"Status"}`, Gone, false},
		// A refused token says nothing of the DaemonSet: an expired token, an RBAC change or
		// a webhook's bad minute must keep everything.
		{"unauthorized", 401, ``, Present, true},
		{"forbidden", 403, `{}`, Present, true},
		{"server trouble", 500, `oops`, Present, true},
		{"unavailable", 503, ``, Present, true},
		{"moved", 301, ``, Present, true},
		{"not a DaemonSet", 200, `{"kind":"Pod"}`, Present, true},
		{"not JSON", 200, `<html>`, Present, true},
	} {
		got, why, err := presence(tc.status, []byte(tc.body))
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%s: %s %q %v, want %s (error: %v)", tc.name, got, why, err, tc.want, tc.err)
		}
		if err == nil && why == "" {
			t.Errorf("%s: no reason given", tc.name)
		}
	}
}

func FuzzPresence(f *testing.F) {
	f.Add(200, []byte(`{"kind":"DaemonSet","metadata":{"deletionTimestamp":"x"}}`))
	f.Add(404, []byte(``))
	f.Add(403, []byte(`{"kind":"DaemonSet"}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		p, why, err := presence(status, body)
		if err != nil && p != Present {
			t.Errorf("an unanswered question must keep everything: %s", p)
		}
		if p == Gone && status != 404 && status != 200 {
			t.Errorf("status %d read as gone", status)
		}
		if err == nil && why == "" {
			t.Error("no reason")
		}
	})
}

// The request a pod makes: the DaemonSet's path, the service account's token, TLS checked
// against the service account's CA.
func TestDaemonSetOverTLS(t *testing.T) {
	t.Parallel()
	var gotPath, gotAuth string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotAuth = r.URL.Path, r.Header.Get("Authorization")
		if strings.HasSuffix(r.URL.Path, "/gone") {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"kind":"DaemonSet","metadata":{}}`))
	}))
	defer srv.Close()
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
	p, _, err := c.DaemonSet(context.Background(), "ns", "ds")
	if err != nil || p != Present {
		t.Fatalf("present DaemonSet: %s, %v", p, err)
	}
	if gotPath != "/apis/apps/v1/namespaces/ns/daemonsets/ds" || gotAuth != "Bearer tok" {
		t.Errorf("request %s with %q", gotPath, gotAuth)
	}
	if p, _, err := c.DaemonSet(context.Background(), "ns", "gone"); err != nil || p != Gone {
		t.Errorf("deleted DaemonSet: %s, %v", p, err)
	}
	// Another CA: the answer is not trusted, and everything is kept.
	other := t.TempDir()
	_ = os.WriteFile(filepath.Join(other, "ca.crt"), selfSigned(t), 0o600)
	_ = os.WriteFile(filepath.Join(other, "token"), []byte("tok"), 0o600)
	c2, err := InCluster(srv.URL, other, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if p, _, err := c2.DaemonSet(context.Background(), "ns", "gone"); err == nil || p != Present {
		t.Errorf("untrusted server: %s, %v; want an error and Present", p, err)
	}
}

// selfSigned is the PEM of a CA certificate that signed nothing the test server shows.
func selfSigned(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestInClusterBadInput(t *testing.T) {
	t.Parallel()
	empty := func(string) string { return "" }
	if _, err := InCluster("", t.TempDir(), empty); err == nil || !strings.Contains(err.Error(), "KUBERNETES_SERVICE_HOST") {
		t.Errorf("no server: %v", err)
	}
	if _, err := InCluster("http://x", t.TempDir(), empty); err == nil || !strings.Contains(err.Error(), "https") {
		t.Errorf("http server: %v", err)
	}
	if _, err := InCluster("https://x", t.TempDir(), empty); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("no token: %v", err)
	}
}

// kubelet rotates a projected service account token (it expires within the hour): a client
// that lives as long as `serve` must send the token the file holds now, not the one it
// started with.
func TestClientReadsRotatedToken(t *testing.T) {
	t.Parallel()
	var got []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	sa := t.TempDir()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(sa, "ca.crt"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(sa, "token")
	if err := os.WriteFile(token, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := InCluster(srv.URL, sa, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	post := func() {
		if err := c.NodeEvent(context.Background(), "n", ReasonKept, "m", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	post()
	if err := os.WriteFile(token, []byte("second\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	post()
	// A token file gone (a rotation's rename in progress) leaves the last one read.
	if err := os.Remove(token); err != nil {
		t.Fatal(err)
	}
	post()
	if want := []string{"Bearer first", "Bearer second", "Bearer second"}; !slices.Equal(got, want) {
		t.Errorf("sent %q, want %q", got, want)
	}
}
