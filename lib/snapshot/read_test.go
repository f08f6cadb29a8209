package snapshot

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

const (
	valid = `{"version":2,"kind":"end","time":"2025-06-01T12:34:56.123456789Z","group":"` + uid +
		`","life":"2025-06-01T11:00:00.987654321Z","path":"mon_groups/` + uid + `","readings":[]}`
	// validV1 is what version 1 wrote: no life.
	validV1 = `{"version":1,"kind":"end","time":"2025-06-01T12:34:56.123456789Z","group":"` + uid + `","path":"mon_groups/` + uid + `","readings":[]}`
)

func TestReadBad(t *testing.T) {
	t.Parallel()
	big := `{"version":2,"kind":"end","time":"2025-06-01T12:34:56Z","group":"g","life":"2025-06-01T12:00:00Z","path":"mon_groups/g","readings":[],"pad":"` +
		strings.Repeat("x", 2<<20) + `"}`
	for name, tc := range map[string]struct{ in, want string }{
		"empty":             {"", "empty"},
		"blank":             {" \n\t", "empty"},
		"null":              {"null", "not a JSON object"},
		"array":             {"[" + valid + "]", "not a JSON object"},
		"string":            {`"x"`, "not a JSON object"},
		"truncated":         {valid[:len(valid)/2], "JSON"},
		"trailing garbage":  {valid + "x", "JSON"},
		"two objects":       {valid + valid, "JSON"},
		"2 MiB":             {big, "1048576"},
		"no version":        {strings.Replace(valid, `"version":2,`, "", 1), "version 0"},
		"version 3":         {strings.Replace(valid, `"version":2`, `"version":3`, 1), "version 3"},
		"version string":    {strings.Replace(valid, `"version":2`, `"version":"2"`, 1), "version"},
		"version fraction":  {strings.Replace(valid, `"version":2`, `"version":1.5`, 1), "version"},
		"v2 without life":   {strings.Replace(valid, `"life":"2025-06-01T11:00:00.987654321Z",`, "", 1), "life missing"},
		"v2 zero life":      {strings.Replace(valid, `2025-06-01T11:00:00.987654321Z`, `0001-01-01T00:00:00Z`, 1), "life missing"},
		"v2 life year 0":    {strings.Replace(valid, `2025-06-01T11:00:00.987654321Z`, `0000-12-31T23:00:00Z`, 1), "life"},
		"v2 bad life":       {strings.Replace(valid, `2025-06-01T11:00:00.987654321Z`, `20250601T110000.987654321Z`, 1), "life"},
		"v1 bad group":      {strings.Replace(validV1, `"group":"`+uid, `"group":"a/b`, 1), "'/'"},
		"kind":              {strings.Replace(valid, `"kind":"end"`, `"kind":"middle"`, 1), "kind"},
		"kind case":         {strings.Replace(valid, `"kind":"end"`, `"kind":"END"`, 1), "kind"},
		"no kind":           {strings.Replace(valid, `"kind":"end",`, "", 1), "kind"},
		"group slash":       {strings.Replace(valid, `"group":"`+uid, `"group":"../`+uid, 1), "group name"},
		"group with /":      {strings.Replace(valid, `"group":"`+uid, `"group":"a/b`, 1), "'/'"},
		"group NUL":         {strings.Replace(valid, `"group":"`+uid, `"group":"a\u0000b`, 1), "NUL"},
		"group empty":       {strings.Replace(valid, `"group":"`+uid, `"group":"`, 1), "group name"},
		"group dot":         {strings.Replace(valid, `"group":"`+uid, `"group":".`, 1), "group name"},
		"no time":           {strings.Replace(valid, `"time":"2025-06-01T12:34:56.123456789Z",`, "", 1), "time"},
		"bad time":          {strings.Replace(valid, `2025-06-01T12:34:56.123456789Z`, `yesterday`, 1), "time"},
		"readings object":   {strings.Replace(valid, `"readings":[]`, `"readings":{}`, 1), "readings"},
		"reading no domain": {strings.Replace(valid, `"readings":[]`, `"readings":[{"name":"x","value":1,"kind":"gauge"}]`, 1), "domain"},
		"reading no name":   {strings.Replace(valid, `"readings":[]`, `"readings":[{"domain":"mon_L3_00","value":1,"kind":"gauge"}]`, 1), "name"},
		"value string":      {strings.Replace(valid, `"readings":[]`, `"readings":[{"domain":"d","name":"n","value":"1","kind":"gauge"}]`, 1), "value"},
		"value overflow":    {strings.Replace(valid, `"readings":[]`, `"readings":[{"domain":"d","name":"n","value":1e400,"kind":"gauge"}]`, 1), "value"},
		"unavailable":       {strings.Replace(valid, `"readings":[]`, `"readings":[],"unavailable":["x"]`, 1), "domain/name"},
		"pod no uid":        {strings.Replace(valid, `"readings":[]`, `"readings":[],"pod":{"name":"web"}`, 1), "uid"},
	} {
		s, err := Read(strings.NewReader(tc.in))
		if err == nil {
			t.Errorf("%s: no error, got %+v", name, s)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "snapshot: ") {
			t.Errorf("%s: error %q, want one containing %q", name, err, tc.want)
		}
		if !reflect.DeepEqual(s, Snapshot{}) {
			t.Errorf("%s: error with a non-zero snapshot %+v", name, s)
		}
	}
}

func TestReadLenient(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"minimal":   valid,
		"version 1": validV1,
		"version 1 with a life it did not define": strings.Replace(validV1, `"readings"`, `"life":"x","readings"`, 1),
		"unknown fields": strings.Replace(valid, `{`, `{"future":{"a":[1,2]},"x":null,`, 1),
		"unknown reading kind": strings.Replace(valid, `"readings":[]`,
			`"readings":[{"domain":"mon_L3_00","name":"mbm_total_bytes","value":1,"kind":"histogram","extra":true}]`, 1),
		"null readings":     strings.Replace(valid, `"readings":[]`, `"readings":null`, 1),
		"no readings":       strings.Replace(valid, `,"readings":[]`, ``, 1),
		"offset time":       strings.Replace(valid, `12:34:56.123456789Z`, `14:34:56.123456789+02:00`, 1),
		"whitespace around": "\n " + valid + "\n\n",
		"exactly 1 MiB":     valid[:len(valid)-1] + `,"pad":"` + strings.Repeat("x", maxSize-len(valid)-9) + `"}`,
	} {
		if name == "exactly 1 MiB" && len(in) != maxSize {
			t.Fatalf("bad test: %d bytes", len(in))
		}
		s, err := Read(strings.NewReader(in))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s.Readings == nil {
			t.Errorf("%s: nil readings", name)
		}
		if !s.Time.Equal(t0) || s.Time.Location().String() != "UTC" {
			t.Errorf("%s: time %v, want %v", name, s.Time, t0)
		}
		wantLife := life0
		if s.Version == 1 {
			wantLife = time.Time{}
		}
		if s.Life != wantLife {
			t.Errorf("%s: version %d, life %v, want %v", name, s.Version, s.Life, wantLife)
		}
	}
}

func TestReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	_, err := Read(iotest.TimeoutReader(iotest.OneByteReader(strings.NewReader(valid))))
	if err == nil {
		t.Error("no error from a failing reader")
	}
	_, err = Read(iotest.ErrReader(boom))
	if !errors.Is(err, boom) {
		t.Errorf("error %v does not wrap the reader's", err)
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	v2 := FileName(uid, life0, End)
	for file, content := range map[string]string{v2: valid, uid + ".end": validV1} {
		if _, err := ReadFile(write(file, content)); err != nil {
			t.Errorf("valid file %s: %v", file, err)
		}
	}
	for name, tc := range map[string]struct{ file, content, want string }{
		"other group":      {FileName("ctr-abc", life0, End), valid, "does not match"},
		"other kind":       {FileName(uid, life0, Begin), valid, "does not match"},
		"other life":       {FileName(uid, life0.Add(1), End), valid, "does not match"},
		"v2 in a v1 name":  {uid + ".end", valid, "does not match"},
		"v1 in a v2 name":  {v2, validV1, "does not match"},
		"v1 of other kind": {uid + ".begin", validV1, "does not match"},
		"no suffix":        {uid, valid, "does not match"},
		"2 MiB":            {"big.end", strings.Repeat(" ", 2<<20) + valid, "2097" /* the real size */},
		"bad content":      {"bad.end", "{", "JSON"},
	} {
		path := write(tc.file, tc.content)
		_, err := ReadFile(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming %s and containing %q", name, err, path, tc.want)
		}
	}
	missing := filepath.Join(dir, "missing.end")
	if _, err := ReadFile(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: error %v, want ErrNotExist", err)
	}
	if _, err := ReadFile(dir); err == nil || !strings.Contains(err.Error(), "regular") {
		t.Errorf("directory: error %v", err)
	}
}

// FuzzRead checks that Read never panics, and that whatever it accepts Write stores and Read
// returns unchanged.
func FuzzRead(f *testing.F) {
	f.Add([]byte(valid))
	f.Add([]byte(validV1))
	f.Add(docExample(f))
	f.Add([]byte(""))
	f.Add([]byte("null"))
	f.Add([]byte("[]"))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(strings.Replace(valid, `2025-06-01T11:00:00.987654321Z`, `9999-12-31T23:59:59.999999999Z`, 1)))
	f.Add([]byte(strings.Replace(validV1, `"readings"`, `"life":"2025-06-01T11:00:00Z","readings"`, 1)))
	f.Add([]byte(strings.Replace(valid, `"readings":[]`, `"readings":[{"domain":"d","name":"n","value":-0,"kind":"counter"}],"unavailable":["a/b"],"pod":{"uid":"u"}`, 1)))
	f.Add([]byte(strings.Replace(valid, uid, `\u00e9\ud800`, 1)))
	f.Add([]byte(strings.Replace(valid, `"version":1`, `"version":1e0`, 1)))
	f.Add([]byte(`{"version":1,"kind":"begin","time":"0000-01-01T00:00:00Z","group":"g"}`))
	f.Add([]byte(`{"version":1,"kind":"begin","time":"9999-12-31T23:59:59-01:00","group":"g"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Read(bytes.NewReader(data))
		if err != nil {
			if !reflect.DeepEqual(s, Snapshot{}) {
				t.Fatalf("error %v with a non-zero snapshot", err)
			}
			return
		}
		for _, r := range s.Readings {
			if r.Kind != "gauge" && r.Kind != "counter" {
				return // Read takes kinds Write refuses
			}
		}
		switch {
		case s.Version == 1 && s.Life.IsZero():
			// A version 1 snapshot is only read; what a writer of 2 makes of it round-trips.
			s.Version, s.Life = 2, s.Time
		case s.Version != 2 || s.Life.IsZero():
			t.Fatalf("Read returned version %d with life %v", s.Version, s.Life)
		}
		out, err := encode(s)
		if err != nil {
			t.Fatalf("Read accepted what Write refuses: %v\n%q", err, data)
		}
		again, err := Read(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("Read refuses what Write wrote: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(again, s) {
			t.Fatalf("round trip changed the snapshot:\n got %+v\nwant %+v", again, s)
		}
		checkFileName(t, s.Group, s.Life, s.Kind)
	})
}

// A snapshot of a big machine stays well under the size limit.
func TestEncodeSize(t *testing.T) {
	t.Parallel()
	s := sample(uid, End)
	s.Readings = nil
	for i := range 1024 {
		s.Readings = append(s.Readings, Reading{Domain: "mon_PERF_PKG_" + strconv.Itoa(i), Name: "core_energy", Value: 1e15 / 3, Kind: "counter", Unit: "J"})
	}
	out, err := encode(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > maxSize/4 {
		t.Errorf("1024 readings take %d bytes", len(out))
	}
}
