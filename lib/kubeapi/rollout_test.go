package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func dsJSON(gen, observed int64, desired, updated, ready int) string {
	return fmt.Sprintf(`{"kind":"DaemonSet","metadata":{"generation":%d},"spec":{"selector":{"matchLabels":{"app":"c","component":"cleanup"}}},`+
		`"status":{"observedGeneration":%d,"desiredNumberScheduled":%d,"updatedNumberScheduled":%d,"numberReady":%d}}`, gen, observed, desired, updated, ready)
}

const (
	podReady   = `{"metadata":{"name":"c-1"},"spec":{"nodeName":"n1"},"status":{"phase":"Running","initContainerStatuses":[{"name":"cleanup","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}],"conditions":[{"type":"Ready","status":"True"}]}}`
	podRunning = `{"metadata":{"name":"c-2"},"spec":{"nodeName":"n2"},"status":{"phase":"Pending","initContainerStatuses":[{"name":"cleanup","state":{"running":{}}}],"conditions":[{"type":"Ready","status":"False"}]}}`
	podRefused = `{"metadata":{"name":"c-3"},"spec":{"nodeName":"n3"},"status":{"phase":"Pending","initContainerStatuses":[{"name":"cleanup","state":{"waiting":{"reason":"CrashLoopBackOff"}},` +
		`"lastState":{"terminated":{"exitCode":1,"reason":"Error","message":"kept everything: /etc/containerd/config.toml line 12 names /usr/local/bin/resctrl-mon-runtime"}}}]}}`
	podFixed = `{"metadata":{"name":"c-5"},"spec":{"nodeName":"n5"},"status":{"phase":"Running","initContainerStatuses":[{"name":"cleanup","state":{"terminated":{"exitCode":0,"reason":"Completed"}},` +
		`"lastState":{"terminated":{"exitCode":1,"reason":"Error","message":"kept everything"}}}],"conditions":[{"type":"Ready","status":"True"}]}}`
	podPull = `{"metadata":{"name":"c-4"},"spec":{"nodeName":"n4"},"status":{"phase":"Pending","initContainerStatuses":[{"name":"cleanup","state":{"waiting":{"reason":"ImagePullBackOff","message":"no such image"}}}]}}`
)

func pods(items ...string) string {
	return `{"kind":"PodList","items":[` + strings.Join(items, ",") + `]}`
}

func TestJudge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		ds, pods   string
		done       bool
		failed     string // in Failed, when not empty
		waitingFor string // in Waiting, when not empty
	}{
		{"all ready", dsJSON(1, 1, 2, 2, 2), pods(podReady, podReady), true, "", ""},
		{"no node to clean", dsJSON(1, 1, 0, 0, 0), pods(), true, "", ""},
		{"not yet seen by the controller", dsJSON(1, 0, 0, 0, 0), pods(), false, "", "not seen"},
		{"one node still cleaning", dsJSON(1, 1, 2, 2, 1), pods(podReady, podRunning), false, "", "node n2"},
		{"refused on a node", dsJSON(1, 1, 2, 2, 1), pods(podReady, podRefused), false, "node n3: cleanup exited 1 (Error): kept everything: /etc/containerd/config.toml", ""},
		{"refused, then done on a retry", dsJSON(1, 1, 1, 1, 1), pods(podFixed), true, "", ""},
		{"image not pulled", dsJSON(1, 1, 1, 1, 0), pods(podPull), false, "", "ImagePullBackOff"},
	} {
		ds, err := parseDaemonSet([]byte(tc.ds))
		if err != nil {
			t.Fatal(err)
		}
		p, err := parsePods([]byte(tc.pods))
		if err != nil {
			t.Fatal(err)
		}
		r := judge(ds, p)
		if r.Done != tc.done {
			t.Errorf("%s: done %v, want %v (%+v)", tc.name, r.Done, tc.done, r)
		}
		if got := strings.Join(r.Failed, "\n"); (tc.failed == "") != (got == "") || !strings.Contains(got, tc.failed) {
			t.Errorf("%s: failed %q, want %q", tc.name, got, tc.failed)
		}
		if got := strings.Join(r.Waiting, "\n"); !strings.Contains(got, tc.waitingFor) {
			t.Errorf("%s: waiting %q, want %q in it", tc.name, got, tc.waitingFor)
		}
	}
}

func TestParseRolloutBadInput(t *testing.T) {
	t.Parallel()
	for _, b := range []string{`{"kind":"Pod"}`, `{"kind":"DaemonSet"}`, `[`} {
		if _, err := parseDaemonSet([]byte(b)); err == nil {
			t.Errorf("parseDaemonSet(%s): no error", b)
		}
	}
	for _, b := range []string{`{"kind":"Status"}`, `{"kind":"PodList","items":{}}`} {
		if _, err := parsePods([]byte(b)); err == nil {
			t.Errorf("parsePods(%s): no error", b)
		}
	}
}

func FuzzRollout(f *testing.F) {
	f.Add([]byte(dsJSON(1, 1, 2, 2, 1)), []byte(pods(podReady, podRefused)))
	f.Add([]byte(dsJSON(2, 1, 0, 0, 0)), []byte(pods()))
	f.Fuzz(func(t *testing.T, dsb, podsb []byte) {
		ds, err := parseDaemonSet(dsb)
		if err != nil {
			return
		}
		p, err := parsePods(podsb)
		if err != nil {
			return
		}
		r := judge(ds, p)
		if r.Done && (len(r.Failed) > 0 || ds.Status.NumberReady < ds.Status.DesiredNumberScheduled) {
			t.Errorf("done with %+v", r)
		}
	})
}

// The Job's wait against an API server whose cleanup DaemonSet moves on at each poll: the
// pods' path, the selector from the DaemonSet, done once every pod is ready.
func TestWaitRollout(t *testing.T) {
	t.Parallel()
	var polls atomic.Int32
	var selector atomic.Value
	c := apiServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/apis/apps/v1/namespaces/ns/daemonsets/c":
			switch polls.Add(1) {
			case 1:
				_, _ = w.Write([]byte(dsJSON(1, 0, 0, 0, 0)))
			case 2:
				_, _ = w.Write([]byte(dsJSON(1, 1, 2, 2, 1)))
			default:
				_, _ = w.Write([]byte(dsJSON(1, 1, 2, 2, 2)))
			}
		case "/api/v1/namespaces/ns/pods":
			selector.Store(r.URL.Query().Get("labelSelector"))
			if polls.Load() == 2 {
				_, _ = w.Write([]byte(pods(podReady, podRunning)))
				return
			}
			_, _ = w.Write([]byte(pods(podReady, podReady)))
		default:
			http.NotFound(w, r)
		}
	})
	var heard []string
	err := c.WaitRollout(context.Background(), "ns", "c", time.Millisecond, func(s string) { heard = append(heard, s) })
	if err != nil {
		t.Fatal(err)
	}
	if polls.Load() != 3 || len(heard) != 2 {
		t.Errorf("%d polls, progress %q; want 3 and 2 changes", polls.Load(), heard)
	}
	if got := selector.Load(); got != "app=c,component=cleanup" {
		t.Errorf("labelSelector %v", got)
	}
}

// A node whose cleanup failed ends the wait at once, naming the node and what it said; a
// refused request is asked again until the deadline, then named.
func TestWaitRolloutFails(t *testing.T) {
	t.Parallel()
	c := apiServer(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/pods") {
			_, _ = w.Write([]byte(pods(podReady, podRefused)))
			return
		}
		_, _ = w.Write([]byte(dsJSON(1, 1, 2, 2, 1)))
	})
	err := c.WaitRollout(context.Background(), "ns", "c", time.Millisecond, func(string) {})
	if !errors.Is(err, ErrCleanupFailed) || !strings.Contains(err.Error(), "node n3") || !strings.Contains(err.Error(), "config.toml") {
		t.Errorf("failed cleanup: %v", err)
	}

	var asked atomic.Int32
	forbidden := apiServer(t, func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Error(w, "forbidden", http.StatusForbidden)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The deadline comes once the refusal was heard, whatever the machine's speed.
	err = forbidden.WaitRollout(ctx, "ns", "c", time.Millisecond, func(s string) {
		if strings.Contains(s, "403") {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "403") {
		t.Errorf("refused until the deadline: %v", err)
	}
}
