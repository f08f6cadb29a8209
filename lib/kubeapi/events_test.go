package kubeapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// eventSink is an API server that takes every Event posted (201): where the last went
// (method and path) and its body.
func eventSink(t *testing.T) (*string, *map[string]any, *Client) {
	t.Helper()
	var path string
	var got map[string]any
	c := apiServer(t, func(w http.ResponseWriter, r *http.Request) {
		path = r.Method + " " + r.URL.Path
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Errorf("event body: %v", err)
		}
		w.WriteHeader(http.StatusCreated)
	})
	return &path, &got, c
}

// The Event `kubectl describe node` shows: in "default", about the Node by name (kubelet's
// UID convention), Warning when something was kept.
func TestNodeEvent(t *testing.T) {
	t.Parallel()
	path, got, c := eventSink(t)
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	if err := c.NodeEvent(context.Background(), "node-1", ReasonKept, "kept everything: /etc/containerd/config.toml names the wrapper", now); err != nil {
		t.Fatal(err)
	}
	if *path != "POST /api/v1/namespaces/default/events" {
		t.Errorf("posted to %s", *path)
	}
	obj, _ := (*got)["involvedObject"].(map[string]any)
	if obj["kind"] != "Node" || obj["name"] != "node-1" || obj["uid"] != "node-1" || obj["namespace"] != nil {
		t.Errorf("involvedObject = %v", obj)
	}
	if (*got)["reason"] != ReasonKept || (*got)["type"] != "Warning" || (*got)["firstTimestamp"] != "2026-12-03T12:00:00Z" ||
		!strings.Contains((*got)["message"].(string), "config.toml") {
		t.Errorf("event = %v", got)
	}
	if e := nodeEvent("n", ReasonUninstall, strings.Repeat("x", 5000), now); e.Type != "Normal" || len(e.Message) != maxMessage {
		t.Errorf("uninstall event: type %s, message of %d bytes", e.Type, len(e.Message))
	}
}

// A refused Event is an error the caller logs and goes on from.
func TestNodeEventRefused(t *testing.T) {
	t.Parallel()
	c := apiServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"kind":"Status","reason":"Forbidden"}`, http.StatusForbidden)
	})
	err := c.NodeEvent(context.Background(), "node-1", ReasonUninstall, "done", time.Now())
	if err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "node-1") {
		t.Errorf("refused event: %v, want an error naming the node and the status", err)
	}
}
