package kubeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// Presence is what the API server says of a DaemonSet.
type Presence int

const (
	// Present: the DaemonSet exists and is not being deleted; its pod is being replaced.
	Present Presence = iota
	// Gone: the API server said so, by a 404 or a deletionTimestamp, and nothing else.
	Gone
)

func (p Presence) String() string {
	if p == Present {
		return "present"
	}
	return "gone"
}

// DaemonSet says whether namespace/name is still there, and why it thinks so. An error
// means the question could not be answered (no answer, or one that does not say): the
// caller then keeps everything, the safe side.
func (c *Client) DaemonSet(ctx context.Context, namespace, name string) (Presence, string, error) {
	path := fmt.Sprintf("/apis/apps/v1/namespaces/%s/daemonsets/%s", url.PathEscape(namespace), url.PathEscape(name))
	status, body, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return Present, "", fmt.Errorf("get daemonset %s/%s: %w", namespace, name, err)
	}
	return presence(status, body)
}

// presence reads the API server's answer to the GET of a DaemonSet. Only a 404 or a
// deletionTimestamp says the DaemonSet is going. A 401 or 403 does not: a token expired or
// revoked, an RBAC change or an authorization webhook's bad minute look the same as a
// release whose service account was deleted, and guessing "gone" there ended every group on
// a node whose pod was only restarting.
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
		return Gone, "the API server says the DaemonSet does not exist (404)", nil
	case http.StatusUnauthorized, http.StatusForbidden:
		return Present, "", fmt.Errorf("kubeapi: the API server refused this pod's service account (%d), which says nothing of the DaemonSet: %.200s", status, body)
	}
	return Present, "", unexpected("get daemonset", status, body)
}
