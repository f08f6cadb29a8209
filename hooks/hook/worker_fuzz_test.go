package hook

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
)

// The worker's request crosses a process as JSON: the hook encodes it, the worker decodes it
// as Work does. Whatever the worker accepts, encoded again by the hook's side, must decode to
// the very same request (the same stage, container state, deadline and, above all, the same
// configuration: a worker running with another failure policy or state dir than its hook
// would break every promise the config makes). Bad bytes are an error, never a panic.
func FuzzWorkerRequest(f *testing.F) {
	good, err := json.Marshal(request{Stage: "createRuntime", Config: config.Default(),
		State:    specs.State{Version: "1.0.2", ID: "c1", Status: specs.StateCreating, Pid: 42, Bundle: "/b", Annotations: map[string]string{"a": "b"}},
		Deadline: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"stage":"poststop","state":{"id":"x","pid":-1},"config":{"retention":"90s","failurePolicy":"closed"}}`))
	f.Add([]byte(`{"config":{"retention":12}}`))
	f.Add([]byte(`{"deadline":"not a time"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var req request
		if err := json.NewDecoder(bytes.NewReader(b)).Decode(&req); err != nil {
			return
		}
		again, err := json.Marshal(req)
		if err != nil {
			// What the worker took in, the hook could not have sent: only a deadline
			// outside what JSON's time format holds may do that.
			if !strings.Contains(err.Error(), "Time.MarshalJSON") {
				t.Fatalf("a decoded request does not encode: %v", err)
			}
			return
		}
		var back request
		if err := json.NewDecoder(bytes.NewReader(again)).Decode(&back); err != nil {
			t.Fatalf("the request the hook's side writes does not decode: %v\n%s", err, again)
		}
		// Compared as the pipe carries it: an empty map and none are one request.
		if twice, err := json.Marshal(back); err != nil || !bytes.Equal(again, twice) {
			t.Errorf("the request changed across the pipe (%v):\n sent %s\n  got %s", err, again, twice)
		}
	})
}
