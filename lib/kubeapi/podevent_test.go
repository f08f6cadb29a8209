package kubeapi

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The Event `kubectl describe pod` shows: in the pod's namespace, about the Pod by namespace,
// name and UID, with a name that is the same for the same pod and reason.
func TestPostPodEvent(t *testing.T) {
	t.Parallel()
	path, got, c := eventSink(t)
	pod := PodRef{Namespace: "team-a", Name: "web-0", UID: "0b9f7c4e-1111-2222-3333-444455556666"}
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	err := c.PostPodEvent(context.Background(), PodEvent{Pod: pod, Reason: "ResctrlMonPending", Type: "Warning",
		Message: "no free RMID", Node: "node-1", Time: now})
	if err != nil {
		t.Fatal(err)
	}
	if *path != "POST /api/v1/namespaces/team-a/events" {
		t.Errorf("posted to %s", *path)
	}
	obj, _ := (*got)["involvedObject"].(map[string]any)
	if obj["kind"] != "Pod" || obj["namespace"] != "team-a" || obj["name"] != "web-0" || obj["uid"] != pod.UID {
		t.Errorf("involvedObject = %v", obj)
	}
	meta, _ := (*got)["metadata"].(map[string]any)
	if meta["name"] != EventName(pod, "ResctrlMonPending") || meta["namespace"] != "team-a" {
		t.Errorf("metadata = %v", meta)
	}
	src, _ := (*got)["source"].(map[string]any)
	if (*got)["reason"] != "ResctrlMonPending" || (*got)["type"] != "Warning" || (*got)["message"] != "no free RMID" ||
		(*got)["firstTimestamp"] != "2026-12-05T12:00:00Z" || src["component"] != "resctrl-mon" || src["host"] != "node-1" {
		t.Errorf("event = %v", got)
	}
}

// The API server's answers: 409 is an Event posted before (ErrEventExists), anything else but
// 200/201 an error naming the pod and the status.
func TestPostPodEventAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		exists bool
		err    bool
	}{
		{http.StatusCreated, false, false},
		{http.StatusOK, false, false},
		{http.StatusConflict, true, true},
		{http.StatusForbidden, false, true},
		{http.StatusUnprocessableEntity, false, true},
		{http.StatusInternalServerError, false, true},
	} {
		c := apiServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(`{"kind":"Status"}`))
		})
		err := c.PostPodEvent(context.Background(), PodEvent{Pod: PodRef{Namespace: "ns", Name: "p", UID: "u"},
			Reason: "ResctrlMonPlaced", Type: "Normal", Time: time.Now()})
		if (err != nil) != tc.err || errors.Is(err, ErrEventExists) != tc.exists {
			t.Errorf("answer %d: %v", tc.status, err)
		}
		if err != nil && !strings.Contains(err.Error(), "ns/p") {
			t.Errorf("answer %d: %v does not name the pod", tc.status, err)
		}
	}
}

// dnsSubdomain is the API server's check of an object's name.
var dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// An Event's name is a DNS subdomain for every pod name there can be, the longest too, and
// differs by UID and by reason.
func TestEventName(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"p", "web-0", "a.b.c", strings.Repeat("x", 253), strings.Repeat("x", 235) + "-.y" + strings.Repeat("z", 15),
		strings.Repeat("a.", 126) + "b"} {
		pod := PodRef{Namespace: "ns", Name: name, UID: "u1"}
		n := EventName(pod, "R")
		if len(n) > 253 || !dnsSubdomain.MatchString(n) {
			t.Errorf("EventName(%q) = %q (%d bytes): not a DNS subdomain", name, n, len(n))
		}
		if n == EventName(PodRef{Namespace: "ns", Name: name, UID: "u2"}, "R") || n == EventName(pod, "S") {
			t.Errorf("EventName(%q): the same for another UID or reason", name)
		}
		if n != EventName(pod, "R") {
			t.Errorf("EventName(%q) changes", name)
		}
	}
	long := podEvent(PodEvent{Pod: PodRef{Name: "p"}, Message: strings.Repeat("é", 1000)})
	if len(long.Message) > maxMessage || !strings.HasSuffix(long.Message, "...") || !utf8Valid(long.Message) {
		t.Errorf("a long message: %d bytes", len(long.Message))
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
