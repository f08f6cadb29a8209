// Package kubeapi is the little of the Kubernetes API resctrl-mon's pods need, as a few lines
// of HTTP with the pod's service account rather than client-go (the binaries stay small):
//   - whether a DaemonSet is still there (`host uninstall --unless-daemonset`, kept for
//     compatibility: the chart now cleans up from a Helm hook instead, see rollout.go);
//   - whether the cleanup DaemonSet of a `helm uninstall` has run on every node (rollout.go);
//   - an Event on a Node saying what the cleanup decided there (events.go);
//   - an Event on a Pod saying it was left pending, refused, placed late or placed after
//     all (podevent.go, posted by lib/podevents in `serve`).
//
// An answer it cannot read is an error, never a guess: the callers keep everything on the
// node then, the safe side.
package kubeapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ServiceAccountDir is where kubelet mounts a pod's service account token and CA.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Timeout bounds one request, the 10 s docs/install/kubernetes.md promises.
const Timeout = 10 * time.Second

// maxBody bounds what is read of an answer: a DaemonSet, a node's pod list.
const maxBody = 8 << 20

// Client reaches the API server with a bearer token.
type Client struct {
	server    string // https://host:port
	tokenFile string
	http      *http.Client

	mu    sync.Mutex
	token string // the last token read
}

// InCluster is a client for the API server the pod's environment names
// (KUBERNETES_SERVICE_HOST and _PORT), or server when it is not empty (a cluster whose
// service network does not reach host-network pods), with the service account in saDir.
func InCluster(server, saDir string, getenv func(string) string) (*Client, error) {
	if server == "" {
		host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
		if host == "" || port == "" {
			return nil, errors.New("kubeapi: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set, and no API server was given")
		}
		server = "https://" + net.JoinHostPort(host, port)
	}
	u, err := url.Parse(server)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("kubeapi: API server %q: want https://host[:port]", server)
	}
	token, err := os.ReadFile(filepath.Join(saDir, "token"))
	if err != nil {
		return nil, fmt.Errorf("kubeapi: service account token: %w", err)
	}
	ca, err := os.ReadFile(filepath.Join(saDir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("kubeapi: service account CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("kubeapi: %s holds no PEM certificate", filepath.Join(saDir, "ca.crt"))
	}
	return &Client{
		server:    strings.TrimSuffix(server, "/"),
		tokenFile: filepath.Join(saDir, "token"),
		token:     strings.TrimSpace(string(token)),
		http: &http.Client{
			Timeout:   Timeout,
			Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
		},
	}, nil
}

// do sends one request (body, when not nil, as JSON) and returns the status and the answer's
// body. An error is no answer at all: the connection, TLS, a timeout.
func (c *Client) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("kubeapi: %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.currentToken())
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("kubeapi: %s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return 0, nil, fmt.Errorf("kubeapi: %s %s: %w", method, path, err)
	}
	return resp.StatusCode, b, nil
}

// currentToken is the token the service account's file holds now: kubelet rewrites a
// projected token before it expires (within the hour), and `serve` lives longer. A file that
// cannot be read (the rename of a rotation) leaves the last token read.
func (c *Client) currentToken() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, err := os.ReadFile(c.tokenFile); err == nil && len(bytes.TrimSpace(b)) > 0 {
		c.token = strings.TrimSpace(string(b))
	}
	return c.token
}

// unexpected is the error for an answer with a status the caller has no meaning for.
func unexpected(what string, status int, body []byte) error {
	return fmt.Errorf("kubeapi: %s: the API server answered %d: %.200s", what, status, body)
}
