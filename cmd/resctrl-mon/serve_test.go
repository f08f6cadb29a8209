package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/resctrl-mon/resctrl-mon/lib/registry"
)

// serve with events.enabled, as the chart runs it: a pending pod's record in the state dir
// becomes one Warning on the Pod, posted to the API server named by --api-server with the
// service account's token, from the node --node-name names; serve then stops at its context's
// end. resctrl is not mounted here: the exporter serves health only, the Events go on.
func TestServePostsPodEvents(t *testing.T) {
	t.Parallel()
	posted := make(chan map[string]any, 8)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &e); err != nil || r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		e["path"] = r.URL.Path
		posted <- e
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	sa := t.TempDir()
	writeFile(t, filepath.Join(sa, "ca.crt"), string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
	writeFile(t, filepath.Join(sa, "token"), "tok\n")

	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if _, err := registry.Open(state); err != nil {
		t.Fatal(err)
	}
	uid := "0b9f7c4e-1111-2222-3333-444455556666"
	writeFile(t, filepath.Join(state, "groups", uid+".json"), `{"group":"`+uid+`","path":"mon_groups/`+uid+`","podUID":"`+uid+
		`","namespace":"team-a","podName":"web-0","containers":{},"created":"2026-12-05T12:00:00Z","pending":"no free RMID"}`)
	cfgPath := filepath.Join(dir, "config.yaml")
	writeFile(t, cfgPath, "resctrlRoot: "+filepath.Join(dir, "resctrl")+"\nstateDir: "+state+"\nsnapshotDir: \"\"\nlog: stderr\n"+
		"events:\n  enabled: true\n  rate: 60\n")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() {
		cliGlobals.Lock()
		defer cliGlobals.Unlock()
		app := &cli.App{Name: "resctrl-mon", Writer: &out, ErrWriter: &out, Flags: configFlags(), Commands: []*cli.Command{serveCommand()}}
		done <- app.RunContext(ctx, []string{"resctrl-mon", "--config=" + cfgPath, "serve", "--listen=127.0.0.1:0",
			"--api-server=" + srv.URL, "--service-account-dir=" + sa, "--node-name=node-1"})
	}()
	select {
	case e := <-posted:
		obj, _ := e["involvedObject"].(map[string]any)
		src, _ := e["source"].(map[string]any)
		if e["path"] != "/api/v1/namespaces/team-a/events" || e["reason"] != "ResctrlMonPending" || e["type"] != "Warning" ||
			obj["uid"] != uid || obj["name"] != "web-0" || src["host"] != "node-1" {
			t.Errorf("posted %v", e)
		}
	case err := <-done:
		t.Fatalf("serve ended before posting: %v\n%s", err, out.String())
	case <-time.After(30 * time.Second):
		cancel()
		err := <-done // the output is read once serve has stopped writing it
		t.Fatalf("no Event posted in 30 s (serve: %v)\n%s", err, out.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
	if len(posted) != 0 {
		t.Errorf("%d more Events posted for one pending pod", len(posted))
	}
}
