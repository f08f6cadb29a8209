package nriplugin

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/nri/pkg/api"

	"github.com/resctrl-mon/resctrl-mon/test/proctest"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// A container's name, as the runtime sends it in StartContainer (kubelet's container name),
// is recorded beside its cgroup for the exporter's container label; a name that is not one
// (too long for a Kubernetes name) is not, and the container keeps its id.
func TestContainerNamesRecorded(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, resctrlsim.Options{}, nil)
		e.startAdapter(Options{})
		p := pod(uidA, sbA, "default", "web")
		e.rt.runPod(p)
		names := map[string]string{"c-app": "app", "c-sidecar": "sidecar", "c-long": strings.Repeat("x", 64)}
		for _, id := range []string{"c-app", "c-sidecar", "c-long"} {
			in := proctest.Hold(t, "sleep 600")
			if err := e.rt.start(p, &api.Container{Id: id, Name: names[id]}, uint32(in.Pid), in); err != nil {
				t.Fatal(err)
			}
		}
		rec := e.record(uidA)
		want := map[string]string{"c-app": "app", "c-sidecar": "sidecar"}
		if !maps.Equal(rec.Names, want) {
			t.Errorf("names %v, want %v", rec.Names, want)
		}
		if _, ok := rec.Containers["c-long"]; !ok {
			t.Errorf("the container with a name too long was not placed: %+v", rec)
		}
	})
}

// A record written by a version that kept no names gets them at the adapter's next
// Synchronize, from the runtime's container list: the series of containers that ran through
// an upgrade are labelled by name too.
func TestContainerNamesFilledAtSynchronize(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, newEnv newEnvFunc) {
		e := newEnv(t, resctrlsim.Options{}, nil)
		a := e.startAdapter(Options{})
		p := pod(uidA, sbA, "default", "web")
		e.rt.runPod(p)
		in := proctest.Hold(t, "sleep 600")
		if err := e.rt.start(p, &api.Container{Id: "c-app", Name: "app"}, uint32(in.Pid), in); err != nil {
			t.Fatal(err)
		}
		if err := a.stop(); err != nil {
			t.Fatalf("adapter: %v", err)
		}
		// As an older version wrote it: no "names".
		path := filepath.Join(e.cfg.StateDir, "groups", uidA+".json")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		if _, ok := raw["names"]; !ok {
			t.Fatalf("the record has no names to take out: %s", b)
		}
		delete(raw, "names")
		if b, err = json.Marshal(raw); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if rec := e.record(uidA); len(rec.Names) != 0 {
			t.Fatalf("names left: %v", rec.Names)
		}

		e.startAdapter(Options{})
		if got := e.record(uidA).Name("c-app"); got != "app" {
			t.Errorf("after Synchronize c-app is named %q, want app", got)
		}
	})
}
