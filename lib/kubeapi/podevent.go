package kubeapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// ErrEventExists: the API server holds an Event of that name already. A PodEvent's name is
// the same for the same pod and reason, so this is an Event posted before (by this process
// or by one before a restart), and nothing is lost.
var ErrEventExists = errors.New("kubeapi: the event exists already")

// PodRef names a Pod as an Event's involvedObject does. The fields come from resctrl-mon's
// records, so from the runtime's annotations: the caller checks them (podevents.ValidPod)
// before they go into a URL and a name.
type PodRef struct {
	Namespace string
	Name      string
	UID       string
}

// PodEvent is one Event about a Pod.
type PodEvent struct {
	Pod     PodRef
	Reason  string
	Type    string // Normal or Warning
	Message string
	Node    string // the node the Event comes from ("" leaves source.host out)
	Time    time.Time
}

// PostPodEvent posts a core/v1 Event about a Pod, in the pod's namespace (where `kubectl
// describe pod` looks), named after the pod, its UID and the reason: a second post of the same
// Event (a restart of the poster) is refused with ErrEventExists instead of doubling it.
func (c *Client) PostPodEvent(ctx context.Context, e PodEvent) error {
	b, err := json.Marshal(podEvent(e))
	if err != nil {
		return fmt.Errorf("kubeapi: event: %w", err)
	}
	what := "post event " + e.Reason + " on pod " + e.Pod.Namespace + "/" + e.Pod.Name
	status, body, err := c.do(ctx, http.MethodPost, "/api/v1/namespaces/"+e.Pod.Namespace+"/events", b)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	switch status {
	case http.StatusCreated, http.StatusOK:
		return nil
	case http.StatusConflict:
		return fmt.Errorf("%s: %w", what, ErrEventExists)
	}
	return unexpected(what, status, body)
}

// maxEventName is a DNS subdomain's length, which an object's name may not pass.
const maxEventName = 253

// EventName is the Event's name: the pod's name (as kubelet names a pod's Events), a dot and
// 16 hex digits of the pod's UID and the reason, so the same Event has the same name.
func EventName(p PodRef, reason string) string {
	sum := sha256.Sum256([]byte(p.UID + "/" + reason))
	suffix := "." + hex.EncodeToString(sum[:8])
	name := p.Name
	if len(name) > maxEventName-len(suffix) {
		// A DNS subdomain's parts end alphanumeric: a cut may leave a '-' or '.' last.
		name = strings.TrimRight(name[:maxEventName-len(suffix)], "-.")
	}
	return name + suffix
}

func podEvent(e PodEvent) event {
	msg := e.Message
	if len(msg) > maxMessage {
		// A cut may split a character: its bytes left are dropped.
		msg = strings.ToValidUTF8(msg[:maxMessage-3], "") + "..."
	}
	ts := e.Time.UTC().Format(time.RFC3339)
	src := map[string]string{"component": "resctrl-mon"}
	if e.Node != "" {
		src["host"] = e.Node
	}
	return event{
		APIVersion: "v1",
		Kind:       "Event",
		Metadata:   map[string]string{"name": EventName(e.Pod, e.Reason), "namespace": e.Pod.Namespace},
		InvolvedObject: map[string]string{"apiVersion": "v1", "kind": "Pod", "namespace": e.Pod.Namespace,
			"name": e.Pod.Name, "uid": e.Pod.UID},
		Reason:         e.Reason,
		Message:        msg,
		Type:           e.Type,
		Source:         src,
		FirstTimestamp: ts,
		LastTimestamp:  ts,
		Count:          1,
	}
}
