package podevents

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/kubeapi"
	"github.com/resctrl-mon/resctrl-mon/lib/registry"
)

// apiServer is an API server over TLS that keeps the Events posted to it by name, as the real
// one does: a second post of a name is 409. answer, when it is not 0, is every answer instead.
type apiServer struct {
	mu     sync.Mutex
	events map[string]map[string]any // by namespace/name
	posts  int
	answer int
}

func startAPI(t *testing.T, answer int) (*apiServer, *kubeapi.Client) {
	t.Helper()
	a := &apiServer{events: map[string]map[string]any{}, answer: answer}
	srv := httptest.NewTLSServer(http.HandlerFunc(a.serve))
	t.Cleanup(srv.Close)
	sa := t.TempDir()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(sa, "ca.crt"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sa, "token"), []byte("tok"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := kubeapi.InCluster(srv.URL, sa, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return a, c
}

func (a *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.posts++
	if a.answer != 0 {
		w.WriteHeader(a.answer)
		return
	}
	var e map[string]any
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &e); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	meta, _ := e["metadata"].(map[string]any)
	key := r.URL.Path + "/" + meta["name"].(string)
	if _, ok := a.events[key]; ok {
		w.WriteHeader(http.StatusConflict)
		return
	}
	a.events[key] = e
	w.WriteHeader(http.StatusCreated)
}

// reasons lists the reasons of the Events the server holds.
func (a *apiServer) reasons() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]int{}
	for _, e := range a.events {
		out[e["reason"].(string)]++
	}
	return out
}

// writeRecord puts a record in the state dir as lifecycle would (a JSON file per group).
func writeRecord(t *testing.T, dir string, r registry.Record) {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "groups", r.Group+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func stateDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	if _, err := registry.Open(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Through real HTTP: a pending pod's Warning, once; a restarted serve that posts it again is
// answered 409 and counts it as exists, so the pod has one Event; the Normal when it is
// placed.
func TestNotifierPostsOnceAcrossRestarts(t *testing.T) {
	t.Parallel()
	api, client := startAPI(t, 0)
	cfg := config.Default()
	cfg.StateDir = stateDir(t)
	uid := "0b9f7c4e-1111-2222-3333-444455556666"
	writeRecord(t, cfg.StateDir, rec(uid, uid, pending))
	ctx := context.Background()

	n := New(cfg, "node-1", client, nil)
	n.Once(ctx)
	n.Once(ctx)
	if got := api.reasons(); got[string(Pending)] != 1 || len(got) != 1 {
		t.Fatalf("after two reads: %v, want one %s", got, Pending)
	}
	if v := testutil.ToFloat64(n.posted.WithLabelValues(string(Pending), string(Posted))); v != 1 {
		t.Errorf("posted %v, want 1", v)
	}

	restarted := New(cfg, "node-1", client, nil)
	restarted.Once(ctx)
	if v := testutil.ToFloat64(restarted.posted.WithLabelValues(string(Pending), string(Exists))); v != 1 {
		t.Errorf("after a restart: exists %v, want 1", v)
	}
	writeRecord(t, cfg.StateDir, rec(uid, uid, late))
	restarted.Once(ctx)
	restarted.Once(ctx)
	if got := api.reasons(); got[string(Pending)] != 1 || got[string(Placed)] != 1 || len(got) != 2 {
		t.Errorf("after placement: %v, want one %s and one %s", got, Pending, Placed)
	}
	for _, e := range api.events {
		obj := e["involvedObject"].(map[string]any)
		if obj["uid"] != uid || obj["kind"] != "Pod" || obj["namespace"] != "team-a" {
			t.Errorf("involvedObject %v", obj)
		}
	}
}

// Best effort: an API server that refuses (no RBAC, a quota) is asked once per Event and the
// refusal counted; nothing is retried, and a later Event is still tried.
func TestNotifierRefusedIsCountedNotRetried(t *testing.T) {
	t.Parallel()
	for _, answer := range []int{http.StatusForbidden, http.StatusUnauthorized, http.StatusInternalServerError} {
		api, client := startAPI(t, answer)
		cfg := config.Default()
		cfg.StateDir = stateDir(t)
		uid := "0b9f7c4e-1111-2222-3333-444455556666"
		writeRecord(t, cfg.StateDir, rec(uid, uid, pending))
		n := New(cfg, "", client, nil)
		for range 3 {
			n.Once(context.Background())
		}
		writeRecord(t, cfg.StateDir, rec(uid, uid, nil))
		n.Once(context.Background())
		if api.posts != 2 {
			t.Errorf("answer %d: %d posts, want 2 (the Warning once, the Normal once)", answer, api.posts)
		}
		if v := testutil.ToFloat64(n.posted.WithLabelValues(string(Pending), string(Failed))); v != 1 {
			t.Errorf("answer %d: failed %v, want 1", answer, v)
		}
	}
}

// No state dir yet (no hook has run on the node): nothing is posted, nothing fails.
func TestNotifierNoStateDir(t *testing.T) {
	t.Parallel()
	api, client := startAPI(t, 0)
	cfg := config.Default()
	cfg.StateDir = filepath.Join(t.TempDir(), "none")
	New(cfg, "", client, nil).Once(context.Background())
	if api.posts != 0 {
		t.Errorf("%d posts with no state dir", api.posts)
	}
}
