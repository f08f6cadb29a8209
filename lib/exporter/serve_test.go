package exporter_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"

	"github.com/resctrl-mon/resctrl-mon/lib/exporter"
	"github.com/resctrl-mon/resctrl-mon/test/tlstest"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns a pool trusting it.
func selfSigned(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	certPEM, keyPEM := tlstest.Loopback(t, "resctrl-mon test")
	for name, b := range map[string][]byte{"cert.pem": certPEM, "key.pem": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	return pool
}

// TestServeTLS: the web config's TLS and basic auth in front of /metrics and /healthz, and
// a clean stop when the context ends.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pool := selfSigned(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webCfg := filepath.Join(dir, "web.yml")
	cfg := "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\nbasic_auth_users:\n  prom: " + string(hash) + "\n"
	if err := os.WriteFile(webCfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "resctrl_mon_test", Help: "A test gauge."}))
	o := exporter.ServeOptions{Listen: "127.0.0.1:0", WebConfigFile: webCfg, Healthy: func() error { return errors.New("not yet") }}
	l, err := exporter.Listen(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- exporter.Serve(ctx, l, reg, o) }()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}, Timeout: 10 * time.Second}
	get := func(url string, auth bool) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth {
			req.SetBasicAuth("prom", "pw")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, b.String()
	}
	base := "https://" + l.Addr().String()
	if code, body := get(base+"/metrics", true); code != http.StatusOK || !strings.Contains(body, "resctrl_mon_test 0") {
		t.Errorf("/metrics over TLS with auth: %d %s", code, body)
	}
	if code, _ := get(base+"/metrics", false); code != http.StatusUnauthorized {
		t.Errorf("/metrics without auth: %d, want 401", code)
	}
	if code, body := get(base+"/healthz", true); code != http.StatusServiceUnavailable || !strings.Contains(body, "not yet") {
		t.Errorf("/healthz of an unhealthy exporter: %d %s", code, body)
	}
	if resp, err := http.Get("http://" + l.Addr().String() + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP served the metrics of a TLS exporter")
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after the context ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("serve did not stop")
	}
}
