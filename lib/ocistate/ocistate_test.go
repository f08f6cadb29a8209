package ocistate

import (
	"errors"
	"strings"
	"testing"
)

func TestReadState(t *testing.T) {
	t.Parallel()
	// What runc 1.1.5 passes to a createRuntime hook.
	st, err := ReadState(strings.NewReader(`{"ociVersion":"1.0.2-dev","id":"t1","status":"creating","pid":5254,"bundle":"/path/to/bundle","annotations":{"a":"b"}}`))
	if err != nil || st.ID != "t1" || st.Pid != 5254 || st.Annotations["a"] != "b" {
		t.Fatalf("got %+v, %v", st, err)
	}
	for name, in := range map[string]string{
		"empty":           "",
		"truncated":       `{"id":"t1","pid":`,
		"garbage":         strings.Repeat("\x00garbage", 2<<20),
		"no id":           `{"pid":1}`,
		"slash in id":     `{"id":"../x","pid":1}`,
		"negative pid":    `{"id":"t1","pid":-4}`,
		"relative bundle": `{"id":"t1","pid":1,"bundle":"rel"}`,
		"array":           `[1,2]`,
	} {
		if _, err := ReadState(strings.NewReader(in)); !errors.Is(err, ErrBadState) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzReadState(f *testing.F) {
	f.Add(`{"id":"t1","pid":1,"annotations":{"io.kubernetes.pod.uid":"x"}}`)
	f.Add(`{"id":"c","status":"stopped"}`)
	f.Fuzz(func(t *testing.T, in string) {
		st, err := ReadState(strings.NewReader(in))
		if err == nil && (!ValidContainerID(st.ID) || st.Pid < 0) {
			t.Errorf("accepted %+v", st)
		}
	})
}
