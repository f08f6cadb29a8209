package wrapper

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The joiner's request crosses a process as JSON: the wrapper encodes it, the joiner decodes
// it as joinMain does. Whatever the joiner accepts, encoded again by the wrapper's side,
// decodes to the very same request: the same group and class, thread, parent (the check that
// keeps a reused pid out) and deadline. Bad bytes are an error, never a panic.
func FuzzJoinRequest(f *testing.F) {
	good, err := json.Marshal(joinRequest{Group: target{Path: "mon_groups/x", Class: "gold"}, Root: "/sys/fs/resctrl", Tid: 7, Parent: 6,
		Container: "c1", Deadline: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Log: "syslog", StateDir: "/run/resctrl-mon"})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"group":{"path":"../x"},"tid":-1,"parent":1e3}`))
	f.Add([]byte(`{"tid":1.5}`))
	f.Add([]byte(`{"deadline":"2026-13-01T00:00:00Z"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var req joinRequest
		if err := json.NewDecoder(bytes.NewReader(b)).Decode(&req); err != nil {
			return
		}
		again, err := json.Marshal(req)
		if err != nil {
			if !strings.Contains(err.Error(), "Time.MarshalJSON") {
				t.Fatalf("a decoded request does not encode: %v", err)
			}
			return
		}
		var back joinRequest
		if err := json.NewDecoder(bytes.NewReader(again)).Decode(&back); err != nil {
			t.Fatalf("the request the wrapper writes does not decode: %v\n%s", err, again)
		}
		// Compared as the pipe carries it: an empty map and none are one request.
		if twice, err := json.Marshal(back); err != nil || !bytes.Equal(again, twice) {
			t.Errorf("the request changed across the pipe (%v):\n sent %s\n  got %s", err, again, twice)
		}
	})
}
