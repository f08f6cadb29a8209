// Package kubeapi asks the API server the one question the DaemonSet's pod needs answered
// as it stops: is this a replacement (a `kubectl delete pod`, a node drain, a `helm upgrade`)
// or is the chart being uninstalled? A replacement must leave the hooks and every group in
// place, so the next pod forgets nothing and no container starts unhooked in between; an
// uninstall must leave nothing of ours on the node.
//
// It is a few lines of HTTP with the pod's service account, not client-go: one GET, and the
// binaries stay small.
package kubeapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ServiceAccountDir is where kubelet mounts a pod's service account token and CA.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Client reaches the API server with a bearer token.
type Client struct {
	server string // https://host:port
	token  string
	http   *http.Client
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
		server: strings.TrimSuffix(server, "/"),
		token:  strings.TrimSpace(string(token)),
		http: &http.Client{
			Timeout:   5 * time.Second,
			Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
		},
	}, nil
}

// Presence is what the API server says of the DaemonSet.
type Presence int

const (
	// Present: the DaemonSet exists and is not being deleted; its pod is being replaced.
	Present Presence = iota
	// Gone: deleted, being deleted, or our own access to it has been deleted with the
	// release (the service account or its role binding: 401 or 403).
	Gone
)

func (p Presence) String() string {
	if p == Present {
		return "present"
	}
	return "gone"
}

// DaemonSet says whether namespace/name is still there, and why it thinks so. An error
// means the question could not be answered (no answer, or an answer it does not know): the
// caller then keeps everything, the safe side.
func (c *Client) DaemonSet(ctx context.Context, namespace, name string) (Presence, string, error) {
	u := fmt.Sprintf("%s/apis/apps/v1/namespaces/%s/daemonsets/%s", c.server, url.PathEscape(namespace), url.PathEscape(name))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Present, "", fmt.Errorf("kubeapi: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return Present, "", fmt.Errorf("kubeapi: get daemonset %s/%s: %w", namespace, name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Present, "", fmt.Errorf("kubeapi: get daemonset %s/%s: %w", namespace, name, err)
	}
	return presence(resp.StatusCode, body)
}

// presence reads the API server's answer to the GET of a DaemonSet.
func presence(status int, body []byte) (Presence, string, error) {
	switch status {
	case http.StatusOK:
		var ds struct {
			Metadata struct {
				DeletionTimestamp string `json:"deletionTimestamp"`
			} `json:"metadata"`
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(body, &ds); err != nil {
			return Present, "", fmt.Errorf("kubeapi: the DaemonSet's JSON: %w", err)
		}
		if ds.Kind != "DaemonSet" {
			return Present, "", fmt.Errorf("kubeapi: the answer is a %q, not a DaemonSet", ds.Kind)
		}
		if ds.Metadata.DeletionTimestamp != "" {
			return Gone, "the DaemonSet is being deleted since " + ds.Metadata.DeletionTimestamp, nil
		}
		return Present, "the DaemonSet is there: this pod is being replaced", nil
	case http.StatusNotFound:
		return Gone, "the DaemonSet was deleted", nil
	case http.StatusUnauthorized, http.StatusForbidden:
		// The chart's service account and role are deleted with the release, and only then.
		return Gone, fmt.Sprintf("the API server refused the release's own service account (%d): the release is gone", status), nil
	}
	return Present, "", fmt.Errorf("kubeapi: the API server answered %d: %.200s", status, body)
}
