package kubeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// The reasons of the Events the cleanup posts on a Node.
const (
	// ReasonUninstall: what resctrl-mon put on the node was taken away.
	ReasonUninstall = "ResctrlMonUninstall"
	// ReasonKept: the cleanup kept everything on the node, and says why.
	ReasonKept = "ResctrlMonKept"
)

// EventNamespace is where an Event about a Node goes. A Node has no namespace, and the API
// server accepts a core/v1 Event about an object without one only in "default" (kubelet
// posts its node events there too); `kubectl describe node` lists Events of every namespace
// whose involvedObject is the Node (by its UID or, as kubelet writes it, by its name).
const EventNamespace = "default"

// maxMessage bounds an Event's message (events.k8s.io's limit; core/v1 has none, kubectl
// shows it on one line).
const maxMessage = 1024

// NodeEvent posts a core/v1 Event about node: Normal for ReasonUninstall, Warning for any
// other reason. It is best effort for its callers: what an Event says is also in the pod's
// log, so an error here is logged, not fatal.
func (c *Client) NodeEvent(ctx context.Context, node, reason, message string, now time.Time) error {
	b, err := json.Marshal(nodeEvent(node, reason, message, now))
	if err != nil {
		return fmt.Errorf("kubeapi: event: %w", err)
	}
	status, body, err := c.do(ctx, http.MethodPost, "/api/v1/namespaces/"+EventNamespace+"/events", b)
	if err != nil {
		return fmt.Errorf("post event on node %s: %w", node, err)
	}
	if status != http.StatusCreated && status != http.StatusOK {
		return unexpected("post event on node "+node, status, body)
	}
	return nil
}

// event is the part of core/v1 Event resctrl-mon fills in: the cleanup's about a Node, serve's
// about a Pod.
type event struct {
	APIVersion     string            `json:"apiVersion"`
	Kind           string            `json:"kind"`
	Metadata       map[string]string `json:"metadata"`
	InvolvedObject map[string]string `json:"involvedObject"`
	Reason         string            `json:"reason"`
	Message        string            `json:"message"`
	Type           string            `json:"type"`
	Source         map[string]string `json:"source"`
	FirstTimestamp string            `json:"firstTimestamp"`
	LastTimestamp  string            `json:"lastTimestamp"`
	Count          int               `json:"count"`
}

func nodeEvent(node, reason, message string, now time.Time) event {
	typ := "Warning"
	if reason == ReasonUninstall {
		typ = "Normal"
	}
	if len(message) > maxMessage {
		message = message[:maxMessage-3] + "..."
	}
	ts := now.UTC().Format(time.RFC3339)
	return event{
		APIVersion: "v1",
		Kind:       "Event",
		Metadata:   map[string]string{"generateName": node + ".resctrl-mon-", "namespace": EventNamespace},
		// The UID is the node's name, as kubelet writes it: no read of the Node is needed.
		InvolvedObject: map[string]string{"apiVersion": "v1", "kind": "Node", "name": node, "uid": node},
		Reason:         reason,
		Message:        message,
		Type:           typ,
		Source:         map[string]string{"component": "resctrl-mon", "host": node},
		FirstTimestamp: ts,
		LastTimestamp:  ts,
		Count:          1,
	}
}
