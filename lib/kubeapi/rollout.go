package kubeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// ErrCleanupFailed is a cleanup pod that failed on its node: the Job that waits reports it,
// and `helm uninstall` with it.
var ErrCleanupFailed = errors.New("the cleanup failed on a node")

// The cleanup of `helm uninstall` is a DaemonSet (a Helm hook), not a Job: what it takes away
// is on every node. Its pod runs the cleanup in an init container, then idles, so "every
// scheduled pod Ready" is "every node cleaned". Helm waits for hook Jobs only; the Job runs
// WaitRollout.

// daemonSet is what WaitRollout reads of a DaemonSet.
type daemonSet struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Generation        int64  `json:"generation"`
		DeletionTimestamp string `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
	} `json:"spec"`
	Status struct {
		ObservedGeneration     int64 `json:"observedGeneration"`
		DesiredNumberScheduled int   `json:"desiredNumberScheduled"`
		UpdatedNumberScheduled int   `json:"updatedNumberScheduled"`
		NumberReady            int   `json:"numberReady"`
	} `json:"status"`
}

type terminated struct {
	ExitCode int    `json:"exitCode"`
	Reason   string `json:"reason"`
	Message  string `json:"message"`
}

type containerState struct {
	Waiting *struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"waiting"`
	Terminated *terminated `json:"terminated"`
}

type pod struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Phase                 string `json:"phase"`
		InitContainerStatuses []struct {
			Name      string         `json:"name"`
			State     containerState `json:"state"`
			LastState containerState `json:"lastState"`
		} `json:"initContainerStatuses"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

type podList struct {
	Kind  string `json:"kind"`
	Items []pod  `json:"items"`
}

// Rollout is where the cleanup DaemonSet stands.
type Rollout struct {
	// Done: every node it runs on has run the cleanup (none at all is done too).
	Done bool
	// Failed names each node whose cleanup exited with an error, and what it said.
	Failed []string
	// Waiting names what is not there yet.
	Waiting []string
}

// judge reads the DaemonSet and its pods. A failure is final even while kubelet retries the
// init container: the answer (a refusal, say) is what the operator must read now. A retry that
// succeeded (the operator fixed the node meanwhile) is a success.
func judge(ds daemonSet, pods []pod) Rollout {
	var r Rollout
	for _, p := range pods {
		node := p.Spec.NodeName
		if node == "" {
			node = "(pod " + p.Metadata.Name + ", not scheduled)"
		}
		for _, c := range p.Status.InitContainerStatuses {
			// The attempt that ended decides; while kubelet retries, the one before it.
			t := c.State.Terminated
			if t == nil {
				t = c.LastState.Terminated
			}
			if t != nil && t.ExitCode != 0 {
				r.Failed = append(r.Failed, fmt.Sprintf("node %s: %s exited %d (%s): %s", node, c.Name, t.ExitCode, t.Reason, strings.TrimSpace(t.Message)))
			}
			if w := c.State.Waiting; w != nil && w.Reason != "" && w.Reason != "PodInitializing" {
				r.Waiting = append(r.Waiting, fmt.Sprintf("node %s: %s waiting: %s %s", node, c.Name, w.Reason, w.Message))
			}
		}
		if !ready(p) {
			r.Waiting = append(r.Waiting, fmt.Sprintf("node %s: pod %s %s, not ready", node, p.Metadata.Name, p.Status.Phase))
		}
	}
	s := ds.Status
	switch {
	case ds.Metadata.Generation > s.ObservedGeneration:
		r.Waiting = append(r.Waiting, "the DaemonSet controller has not seen the cleanup DaemonSet yet")
	case s.UpdatedNumberScheduled < s.DesiredNumberScheduled || s.NumberReady < s.DesiredNumberScheduled:
		r.Waiting = append(r.Waiting, fmt.Sprintf("%d of %d nodes cleaned", s.NumberReady, s.DesiredNumberScheduled))
	default:
		r.Done = len(r.Failed) == 0
	}
	return r
}

func ready(p pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

// Rollout reads the cleanup DaemonSet namespace/name and its pods once.
func (c *Client) Rollout(ctx context.Context, namespace, name string) (Rollout, error) {
	path := fmt.Sprintf("/apis/apps/v1/namespaces/%s/daemonsets/%s", url.PathEscape(namespace), url.PathEscape(name))
	status, body, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return Rollout{}, err
	}
	if status != http.StatusOK {
		return Rollout{}, unexpected("get daemonset "+namespace+"/"+name, status, body)
	}
	ds, err := parseDaemonSet(body)
	if err != nil {
		return Rollout{}, err
	}
	q := url.Values{"labelSelector": {selector(ds.Spec.Selector.MatchLabels)}}
	status, body, err = c.do(ctx, http.MethodGet, "/api/v1/namespaces/"+url.PathEscape(namespace)+"/pods?"+q.Encode(), nil)
	if err != nil {
		return Rollout{}, err
	}
	if status != http.StatusOK {
		return Rollout{}, unexpected("list the pods of daemonset "+namespace+"/"+name, status, body)
	}
	pods, err := parsePods(body)
	if err != nil {
		return Rollout{}, err
	}
	return judge(ds, pods), nil
}

func parseDaemonSet(b []byte) (daemonSet, error) {
	var ds daemonSet
	if err := json.Unmarshal(b, &ds); err != nil {
		return ds, fmt.Errorf("kubeapi: the DaemonSet's JSON: %w", err)
	}
	if ds.Kind != "DaemonSet" {
		return ds, fmt.Errorf("kubeapi: the answer is a %q, not a DaemonSet", ds.Kind)
	}
	if len(ds.Spec.Selector.MatchLabels) == 0 {
		return ds, errors.New("kubeapi: the DaemonSet has no spec.selector.matchLabels")
	}
	return ds, nil
}

func parsePods(b []byte) ([]pod, error) {
	var l podList
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("kubeapi: the pod list's JSON: %w", err)
	}
	if l.Kind != "PodList" {
		return nil, fmt.Errorf("kubeapi: the answer is a %q, not a PodList", l.Kind)
	}
	return l.Items, nil
}

func selector(labels map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}

// WaitRollout asks every `every` until the cleanup DaemonSet has run on every node (nil),
// a node's cleanup failed (ErrCleanupFailed, naming each node and what its pod said), or ctx
// ends (an error saying what was still missing). An unanswered question is asked again: the
// deadline, not one bad answer, ends the wait. progress hears each change.
func (c *Client) WaitRollout(ctx context.Context, namespace, name string, every time.Duration, progress func(string)) error {
	var last string
	for {
		r, err := c.Rollout(ctx, namespace, name)
		now := ""
		switch {
		case err != nil:
			now = err.Error()
		case len(r.Failed) > 0:
			return fmt.Errorf("%w: %s", ErrCleanupFailed, strings.Join(r.Failed, "; "))
		case r.Done:
			return nil
		default:
			now = strings.Join(r.Waiting, "; ")
		}
		if now != last {
			progress(now)
			last = now
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the cleanup DaemonSet %s/%s did not finish: %s: %w", namespace, name, last, ctx.Err())
		case <-time.After(every):
		}
	}
}
